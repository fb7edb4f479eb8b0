package io.refpool.core;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.internal.PoolCore;
import io.refpool.core.internal.PoolSettings;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A reference-counting pool of engine objects that are expensive or bound to the engine's thread
 * discipline, shared through {@link Handle}s and released attached to the engine.
 *
 * <pre>{@code
 * RefPool<String, Session> pool = RefPool.builder((String tenant) -> engine.open(tenant))
 *         .disposer(Session::close)                   // runs attached, exactly once per object
 *         .attachMode(AttachMode.PER_OBJECT)          // or GLOBAL, SHARED
 *         .maxObjects(64)                             // live + idle; timed and async forms wait beyond it
 *         .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
 *         .leakDetection(LeakDetection.SAMPLED)
 *         .build();
 *
 * String rows = pool.call("tenant-7", session -> session.query("select 1"));  // all in one call
 *
 * try (Attachment attached = pool.attach()) {         // applies pending releases if any
 *     try (Handle<Session> session = pool.acquire("tenant-7")) {
 *         Handle<Session> copy = session.share();     // +1, safe to hand to another thread
 *         executor.execute(() -> {
 *             try (copy) {                            // closed off-attachment: deferred
 *                 copy.call(s -> s.query("select 2"));  // attached, in the object's section
 *             }
 *         });
 *     }
 * }
 * }</pre>
 *
 * <p><b>Attaching.</b> Engine work happens attached: inside {@link #attach()} (one thread at a time
 * in {@link AttachMode#GLOBAL} mode, any number in {@link AttachMode#SHARED} mode, where
 * {@link #stopTheWorld()} stops the world). Attachments nest; a nested attach costs a thread-local
 * lookup and one acquire load.
 *
 * <p><b>Releasing.</b> A handle closed on an attached thread decrements its object's count at once;
 * closed on any other thread (a worker, a callback, the GC's cleaner) it enqueues a pending
 * decrement, applied by the first attach that starts after the close returned, or by the pool's
 * drainer if nobody attaches for the drain delay. At count zero the object idles in the cache (if
 * configured) or is disposed, attached, exactly once.
 *
 * <p><b>Objects.</b> At most one live (or idle) object per key; concurrent acquirers of a key being
 * created wait for that one creation (an attached acquirer gives the gate up while it waits, since
 * the creator may need it). An object invalidated while in use no longer counts for its key: the
 * key's next acquire creates its successor while handles to the old one are still open. Any other
 * object being disposed keeps its key until its disposer returned: the key's next acquire waits for that
 * (from inside that very disposer an {@code acquire} is refused, as it would wait for itself). {@link
 * Builder#maxObjects} bounds live plus idle objects, and an object holds its capacity until its
 * disposer returned.
 *
 * <p><b>Waiting.</b> Every wait ends the same way in every method: a time limit with
 * {@link io.refpool.sync.WaitTimeoutException}, a cancelled token with a
 * {@link java.util.concurrent.CancellationException}, an interrupt of a blocking wait with
 * {@link io.refpool.sync.WaitInterruptedException} (the interrupt status kept set); a zero timeout
 * does not wait and a negative one is refused. An {@code *Async} method reports each of them, and
 * every other failure, through its stage, completed exceptionally with the exception itself; only
 * a null argument throws at the call.
 *
 * <p><b>Closing.</b> {@link #close()} disposes idle objects at once and live ones when their last
 * handles close; a handle that is never closed keeps its object (until the leak detector, if on,
 * finds the handle unreachable).
 *
 * <p><b>User code.</b> Whatever the factory, the disposer, the key's {@code hashCode}, {@code
 * equals} and {@code toString}, a weigher, the error listener or the executor throw, no reference,
 * capacity permit or object is lost, and {@link Handle#close()} does not throw it.
 */
public final class RefPool<K, V> implements AutoCloseable {
    /** Numbers the pools built without a name. */
    private final PoolCore<K, V> core;

    private RefPool(PoolCore<K, V> core) {
        this.core = core;
    }

    /**
     * Starts building a pool.
     *
     * @param factory creates the object of a key, and may throw checked exceptions (acquirers then
     *     get an {@link ObjectCreationException}); runs attached, outside every internal lock
     * @param <K> key type (with {@code equals}/{@code hashCode})
     * @param <V> object type
     * @return a builder
     * @throws NullPointerException if {@code factory} is null
     */
    public static <K, V> Builder<K, V> builder(ObjectFactory<? super K, ? extends V> factory) {
        return new Builder<>(Objects.requireNonNull(factory, "factory"));
    }

    /**
     * Starts building a pool whose factory is given last, to {@link Builder#build(ObjectFactory)},
     * so that its key and object types come from the variable the pool is assigned to, and a
     * lambda or constructor reference needs no declared parameter types.
     *
     * <pre>{@code
     * try (RefPool<String, Interpreter> pool = RefPool.newBuilder()
     *         .maxObjects(8)
     *         .disposer(Interpreter::close)          // close() may throw a checked exception
     *         .build(tenant -> new Interpreter(tenant))) {
     *     int answer = pool.call("tenant-7", lua -> lua.eval("return 6 * 7"));
     * }
     * }</pre>
     *
     * <p>As with Caffeine's builder, an option typed by the object ({@code disposer}) narrows the
     * builder's types: give it a method reference or a lambda with declared parameter types.
     *
     * @return a builder with no factory yet
     */
    public static Builder<Object, Object> newBuilder() {
        return new Builder<>(null);
    }

    /**
     * Attaches the calling thread, waiting in line for the gate if needed; nested calls only deepen
     * the scope. Applies pending releases if any.
     *
     * @return the scope, to close on this thread
     * @throws PoolClosedException if the pool is closed (or closes while waiting)
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting (the interrupt
     *     status is kept)
     */
    public Attachment attach() {
        return core.attach(CancellationToken.none());
    }

    /**
     * Attaches the calling thread unless {@code token} is cancelled while it waits for the gate. A
     * token cancelled before the call fails it even if the gate is free, as it fails
     * {@code attachAsync} and {@code acquireAsync}.
     *
     * @param token cancels the wait
     * @return the scope, to close on this thread
     * @throws PoolClosedException if the pool is closed (or closes while waiting)
     * @throws java.util.concurrent.CancellationException if the token is cancelled (before the call
     *     or while waiting)
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     */
    public Attachment attach(CancellationToken token) {
        return core.attach(token);
    }

    /**
     * Attaches the calling thread, waiting at most {@code timeout} for the gate.
     *
     * <pre>{@code
     * try (Attachment attached = pool.attach(Duration.ofMillis(200))) {
     *     pool.acquire("tenant-7").close();
     * }
     * }</pre>
     *
     * @param timeout how long to wait; zero means do not wait
     * @return the scope, to close on this thread
     * @throws io.refpool.sync.WaitTimeoutException if the gate was not free in time (naming the pool
     *     and the timeout, with this caller's stack)
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     * @throws PoolClosedException if the pool is closed (or closes while waiting)
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public Attachment attach(Duration timeout) {
        return core.attachWithin(timeout, false);
    }

    /**
     * Opens a stop-the-world section: waits until no other thread is attached and keeps them out
     * until closed. The calling thread counts as attached inside. In {@link AttachMode#GLOBAL}
     * mode, where {@link #attach()} already lets one thread in, it differs only in keeping the gate
     * while this thread's factories run and while it waits for a busy section, which a plain attachment
     * gives up meanwhile; opened inside a plain attachment, it does so until it closes. In every
     * mode, an acquire or call inside it that has to wait (for the key's object another thread is
     * creating, for the capacity of an object another thread is disposing, or, timed, for capacity
     * in line) waits with the gate given up, since the other thread may need the gate to finish:
     * other threads may attach meanwhile. An object it can have at once (live, idle, or made there)
     * it takes with the gate kept. Acquire what may be in flight before stopping the world.
     *
     * @return the scope, to close on this thread
     * @throws IllegalStateException if the thread is already attached shared (it would wait for
     *     itself)
     * @throws PoolClosedException if the pool is closed
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     */
    public Attachment stopTheWorld() {
        return core.stopTheWorld(CancellationToken.none());
    }

    /**
     * As {@link #stopTheWorld()}, unless {@code token} is cancelled (before the call, or while it
     * waits).
     *
     * @param token cancels the wait
     * @return the scope, to close on this thread
     * @throws java.util.concurrent.CancellationException if the token is cancelled
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     * @throws IllegalStateException if the thread is already attached shared
     * @throws PoolClosedException if the pool is closed
     */
    public Attachment stopTheWorld(CancellationToken token) {
        return core.stopTheWorld(token);
    }

    /**
     * As {@link #stopTheWorld()}, waiting at most {@code timeout}.
     *
     * @param timeout how long to wait; zero means do not wait
     * @return the scope, to close on this thread
     * @throws io.refpool.sync.WaitTimeoutException if the other threads did not leave in time
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     * @throws IllegalStateException if the thread is already attached shared
     * @throws PoolClosedException if the pool is closed
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public Attachment stopTheWorld(Duration timeout) {
        return core.attachWithin(timeout, true);
    }

    /**
     * Waits for the gate without parking a thread, then runs {@code fn} attached, on the thread that
     * granted the gate (the caller's, if it was free), and detaches when {@code fn} returns or throws;
     * if that thread gave the gate up for its factory or a section wait, on a thread of its own.
     * Async code never holds an attachment across a suspension. The token, or the caller completing
     * the returned future (cancel, {@code orTimeout}), ends the wait, and {@code fn} then never runs.
     * A thread inside {@link #stopTheWorld()}, or attached while one waits, must not wait for the
     * stage (nor for an {@code acquireAsync} or {@code callAsync} that needs the gate): it waits in
     * line behind that stop, which waits for this thread to leave.
     *
     * @param token cancels the wait
     * @param fn the attached work
     * @param <T> its result type
     * @return a stage completed with {@code fn}'s result, or failed with its exception, a
     *     {@link java.util.concurrent.CancellationException} (the stage then reads as cancelled), or
     *     a {@link PoolClosedException}
     * @throws NullPointerException if an argument is null (the only throw)
     */
    public <T> CompletionStage<T> attachAsync(CancellationToken token, Function<? super Attachment, ? extends T> fn) {
        return core.attachAsync(token, false, fn);
    }

    /**
     * Runs {@code work} attached (nested if the thread is attached already) and detaches when it
     * returns or throws; what it throws reaches the caller unchanged.
     *
     * <pre>{@code
     * long live = pool.attached(() -> pool.stats().live());
     * }</pre>
     *
     * <p>The closure form opens no {@link Attachment} object: nested, it costs a thread-local lookup,
     * the thread's depth and the check for pending releases. An attachment that {@code work} opens
     * and leaves open ends with it.
     *
     * @param work the attached work
     * @param <T> its result type
     * @param <E> the checked exception {@code work} may throw
     * @return what {@code work} returned
     * @throws E what {@code work} threw
     * @throws PoolClosedException if the pool is closed
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting to attach
     * @throws NullPointerException if {@code work} is null
     */
    public <T, E extends Exception> T attached(AttachedWork<? extends T, E> work) throws E {
        return core.calls().attached(work);
    }

    /**
     * As {@link #attached(AttachedWork)}, for a body that returns nothing. (A name of its own, not an
     * overload: {@code attached(handle::section)} would otherwise match both.)
     *
     * <pre>{@code
     * pool.runAttached(() -> {
     *     try (Handle<Session> session = pool.acquire("tenant-7")) {
     *         session.run(s -> s.refresh());
     *     }
     * });
     * }</pre>
     *
     * @param work the attached work
     * @param <E> the checked exception {@code work} may throw
     * @throws E what {@code work} threw
     * @throws PoolClosedException if the pool is closed
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting to attach
     * @throws NullPointerException if {@code work} is null
     */
    public <E extends Exception> void runAttached(AttachedAction<E> work) throws E {
        Objects.requireNonNull(work, "work");
        core.calls().attached(() -> {
            work.run();
            return null;
        });
    }

    /**
     * Runs {@code fn} on the object of {@code key}: attaches (nested is fine), acquires, takes the
     * object's section in {@link AttachMode#PER_OBJECT} mode, runs {@code fn}, and releases the
     * section, the handle and the attachment, in that order, also when {@code fn} throws; what
     * {@code fn} throws reaches the caller unchanged. {@code fn} must not keep the object: it is
     * the caller's only while {@code fn} runs.
     *
     * <pre>{@code
     * String out = pool.call("tenant-7", session -> session.query("select 1"));
     * }</pre>
     *
     * <p>Calls nest: {@code fn} may call {@code call} for another key, but a thread that holds an
     * object's section (in {@code PER_OBJECT} mode) and waits for another's keeps the first held;
     * to use two objects at once take both with {@link #call(Object, Object, PoolBiFunction)}. Calling
     * {@code call} for the same key from inside {@code fn} throws {@link IllegalStateException} in
     * {@code PER_OBJECT} mode (the section is held already).
     *
     * @param key the key
     * @param fn the work on the object
     * @param <T> its result type
     * @param <E> the checked exception {@code fn} may throw
     * @return what {@code fn} returned
     * @throws E what {@code fn} threw
     * @throws NullPointerException if {@code key} or {@code fn} is null
     * @throws PoolClosedException if the pool is closed
     * @throws CapacityExhaustedException as for {@link #acquire(Object)}
     * @throws IllegalStateException if the thread holds this object's section already
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting to attach, for
     *     another thread's creation of the object, or for its section
     */
    public <T, E extends Exception> T call(K key, PoolFunction<? super V, ? extends T, E> fn) throws E {
        return core.calls().call(key, core.observed(key, fn));
    }

    /**
     * As {@link #call(Object, PoolFunction)}, for a body that returns nothing.
     *
     * <pre>{@code
     * pool.run("tenant-7", session -> session.execute("vacuum"));
     * }</pre>
     *
     * @param key the key
     * @param action the work on the object
     * @param <E> the checked exception {@code action} may throw
     * @throws E what {@code action} threw
     * @throws NullPointerException if {@code key} or {@code action} is null
     * @throws PoolClosedException if the pool is closed
     * @throws CapacityExhaustedException as for {@link #acquire(Object)}
     * @throws IllegalStateException if the thread holds this object's section already
     */
    public <E extends Exception> void run(K key, PoolConsumer<? super V, E> action) throws E {
        Objects.requireNonNull(action, "action");
        core.calls().call(key, core.observed(key, value -> {
            action.accept(value);
            return null;
        }));
    }

    /**
     * {@link #call(Object, PoolFunction)} that waits at most {@code timeout} for everything it waits
     * for: capacity (in line, as {@link #acquire(Object, Duration)} does, with the calling thread's
     * attachment suspended meanwhile), a creation under way, the gate and the object's section.
     * Without an {@linkplain Builder#interrupter interrupter} the limit bounds the waits, never the
     * function: once {@code fn} runs, it runs to its end. With one, the pool calls it if {@code fn}
     * still runs when the limit passes; {@code fn} then sees the engine's own failure, which this
     * call throws.
     *
     * <pre>{@code
     * String out = pool.call("tenant-7", Duration.ofSeconds(2), session -> session.query("select 1"));
     * }</pre>
     *
     * @param key the key
     * @param timeout how long to wait, in all
     * @param fn the work on the object
     * @param <T> its result type
     * @param <E> the checked exception {@code fn} may throw
     * @return what {@code fn} returned
     * @throws E what {@code fn} threw
     * @throws io.refpool.sync.WaitTimeoutException if the time ran out before {@code fn} started
     *     (it names the key and the pool); nothing is held
     * @throws NullPointerException if an argument is null
     * @throws PoolClosedException if the pool is closed
     * @throws IllegalStateException if the thread holds an object's section (inside a {@link
     *     AttachMode#PER_OBJECT} {@code call}, say): the timed wait gives the gate up, as {@code
     *     acquire(key, timeout)} does, and is refused there for the same reason
     */
    public <T, E extends Exception> T call(K key, Duration timeout, PoolFunction<? super V, ? extends T, E> fn)
            throws E {
        Objects.requireNonNull(fn, "fn");
        long started = System.nanoTime();
        PoolFunction<? super V, ? extends T, E> observed = core.observed(key, fn); // timed from now
        Handle<V> handle = core.acquireForCall(key, timeout); // checks key and timeout
        return core.calls()
                .callWithin(handle, timeout, started + saturatedNanos(timeout), observed); // closes the handle
    }

    /**
     * As {@link #call(Object, Duration, PoolFunction)}, for a body that returns nothing.
     *
     * <pre>{@code
     * pool.run("tenant-7", Duration.ofSeconds(2), session -> session.execute("vacuum"));
     * }</pre>
     *
     * @param key the key
     * @param timeout how long to wait, in all
     * @param action the work on the object
     * @param <E> the checked exception {@code action} may throw
     * @throws E what {@code action} threw
     * @throws io.refpool.sync.WaitTimeoutException if the time ran out before {@code action} started
     * @throws NullPointerException if an argument is null
     * @throws PoolClosedException if the pool is closed
     * @throws IllegalStateException if the thread holds an object's section, as for {@link
     *     #call(Object, Duration, PoolFunction)}
     */
    public <E extends Exception> void run(K key, Duration timeout, PoolConsumer<? super V, E> action) throws E {
        Objects.requireNonNull(action, "action");
        call(key, timeout, value -> {
            action.accept(value);
            return null;
        });
    }

    private static long saturatedNanos(Duration timeout) {
        try {
            return timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }

    /**
     * Runs {@code fn} on the objects of two keys at once, holding both objects' sections in
     * {@link AttachMode#PER_OBJECT} mode. The sections are taken in one global order (the order in
     * which the objects were created), whatever order the keys are named in, so two callers naming
     * them in opposite orders never deadlock. One key named twice is one object, locked once.
     *
     * <pre>{@code
     * boolean copied = pool.call("tenant-a", "tenant-b", (a, b) -> a.copyTo(b));
     * }</pre>
     *
     * @param first the first key; its object is {@code fn}'s first argument
     * @param second the second key
     * @param fn the work on both objects
     * @param <T> its result type
     * @param <E> the checked exception {@code fn} may throw
     * @return what {@code fn} returned
     * @throws E what {@code fn} threw
     * @throws NullPointerException if an argument is null
     * @throws PoolClosedException if the pool is closed
     * @throws CapacityExhaustedException as for {@link #acquire(Object)}
     * @throws IllegalStateException if the thread holds either object's section already
     * @throws io.refpool.sync.WaitInterruptedException as for {@link #call(Object, PoolFunction)}
     */
    public <T, E extends Exception> T call(K first, K second, PoolBiFunction<? super V, ? extends T, E> fn) throws E {
        return core.calls().call(first, second, core.observed(first, second, fn));
    }

    /**
     * As {@link #call(Object, Object, PoolBiFunction)}, for a body that returns nothing.
     *
     * <pre>{@code
     * pool.run("tenant-a", "tenant-b", (a, b) -> a.mergeInto(b));
     * }</pre>
     *
     * @param first the first key; its object is {@code action}'s first argument
     * @param second the second key
     * @param action the work on both objects
     * @param <E> the checked exception {@code action} may throw
     * @throws E what {@code action} threw
     * @throws NullPointerException if an argument is null
     * @throws PoolClosedException if the pool is closed
     * @throws CapacityExhaustedException as for {@link #acquire(Object)}
     * @throws IllegalStateException if the thread holds either object's section already
     */
    public <E extends Exception> void run(K first, K second, PoolBiConsumer<? super V, E> action) throws E {
        Objects.requireNonNull(action, "action");
        core.calls().call(first, second, core.observed(first, second, (a, b) -> {
            action.accept(a, b);
            return null;
        }));
    }

    /**
     * Runs {@code fn} on the object of {@code key} without parking a thread: waits for the object
     * (its creation and capacity), the gate and, in {@link AttachMode#PER_OBJECT} mode, the object's
     * section, then runs {@code fn} attached on the pool's call executor ({@link
     * Builder#callExecutor}) and releases everything when it returns or throws; a checked exception
     * it throws fails the stage. Every failure goes through the stage; a caller
     * that cancels or completes the returned future itself ends the wait, and nothing is kept. With
     * an {@linkplain Builder#interrupter interrupter}, a {@code token} cancelled while {@code fn}
     * runs interrupts it (on the cancelling thread), and the stage fails with what {@code fn}
     * then throws; a token cancelled after the waits but before {@code fn} started fails the stage
     * with a {@link java.util.concurrent.CancellationException}, and {@code fn} does not run.
     *
     * <pre>{@code
     * pool.callAsync("tenant-7", token, session -> session.query("select 1"))
     *         .thenAccept(System.out::println);
     * }</pre>
     *
     * @param key the key
     * @param token cancels the waits
     * @param fn the work on the object
     * @param <T> its result type
     * @return a stage completed with {@code fn}'s result, or failed with its exception, a
     *     {@link java.util.concurrent.CancellationException} (the stage then reads as cancelled), a
     *     {@link PoolClosedException} or what the factory threw
     * @throws NullPointerException if an argument is null
     */
    public <T> CompletionStage<T> callAsync(
            K key, CancellationToken token, PoolFunction<? super V, ? extends T, ? extends Exception> fn) {
        return core.asyncCalls().callAsync(key, token, core.observed(key, fn));
    }

    /**
     * {@link #callAsync(Object, CancellationToken, PoolFunction)} whose waits end after {@code
     * timeout}: the stage then fails with a {@link io.refpool.sync.WaitTimeoutException} that names
     * the key and the pool. Without an {@linkplain Builder#interrupter interrupter} the limit bounds
     * the waits, never the function: a function that started runs to its end. With one, the
     * interrupter is called if the function still runs at the limit, and the stage fails with what
     * the function then throws. A zero timeout takes only what is free at once: with the object,
     * the gate and the section free, the function runs when the call executor starts it (without an
     * interrupter; with one, a zero limit leaves the function no time and fails the call). A caller that
     * completes or cancels the returned future itself ({@code completeOnTimeout}, say) ends the
     * waits, as with a token; a function already running is not interrupted for it, and its limit
     * still stands.
     *
     * <pre>{@code
     * pool.callAsync("tenant-7", Duration.ofSeconds(2), session -> session.query("select 1"))
     *         .thenAccept(System.out::println);
     * }</pre>
     *
     * @param key the key
     * @param timeout how long the waits may take, in all
     * @param fn the work on the object
     * @param <T> its result type
     * @return a stage completed with {@code fn}'s result, or failed with its exception, a
     *     {@code WaitTimeoutException}, a {@link PoolClosedException}, what the factory threw, or an
     *     {@link IllegalArgumentException} for a negative timeout
     * @throws NullPointerException if an argument is null
     */
    public <T> CompletionStage<T> callAsync(
            K key, Duration timeout, PoolFunction<? super V, ? extends T, ? extends Exception> fn) {
        return core.asyncCalls().callAsyncWithin(key, timeout, core.observed(key, fn));
    }

    /** {@return whether the calling thread is attached to this pool} */
    public boolean isAttached() {
        return core.isAttached();
    }

    /**
     * Opens a handle to the object of {@code key}: shares the live one, revives an idle one, or
     * creates one (waiting for a creation already under way). Needs the calling thread attached.
     *
     * @param key the key
     * @return a new handle
     * @throws IllegalStateException if the calling thread is not attached
     * @throws CapacityExhaustedException if a new object is needed while {@code maxObjects} exist
     *     and none is idle
     * @throws PoolClosedException if the pool is closed
     * @throws ObjectCreationException if the factory threw a checked exception (its cause)
     * @throws RuntimeException what the factory threw
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting for another
     *     thread's creation of the object (which goes on)
     */
    public Handle<V> acquire(K key) {
        return core.acquire(key);
    }

    /**
     * Opens a handle to the object of {@code key}, waiting at most {@code timeout} for capacity (in
     * line, FIFO), for a creation under way and for the gate. Unlike {@link #acquire(Object)} it
     * needs no attachment; an attached caller's attachment is suspended while it waits, as {@link
     * Attachment#detached} does, so that the releases it waits for can run, and it is attached again,
     * at the same depth, when this returns.
     *
     * <pre>{@code
     * try (Attachment attached = pool.attach();
     *         Handle<Session> session = pool.acquire("tenant-7", Duration.ofSeconds(2))) {
     *     session.call(s -> s.query("select 1"));  // in the object's section
     * }
     * }</pre>
     *
     * @param key the key
     * @param timeout how long to wait; zero means do not wait
     * @return a new handle
     * @throws io.refpool.sync.WaitTimeoutException if the time ran out (it names the key and the
     *     pool); nothing is held
     * @throws io.refpool.sync.WaitInterruptedException if the thread was interrupted while waiting
     *     (the interrupt status is kept); nothing is held
     * @throws PoolClosedException if the pool is closed
     * @throws ObjectCreationException if the factory threw a checked exception (its cause)
     * @throws RuntimeException what the factory threw
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException if the thread is attached and holds an object's section: the wait
     *     gives the gate up, and a section holder never waits to take it back
     */
    public Handle<V> acquire(K key, Duration timeout) {
        return core.acquire(key, timeout);
    }

    /**
     * Opens a handle to the object of {@code key} from any thread, attaching as needed and waiting
     * in line (FIFO, detached) for capacity. A caller that cancels or completes the returned future
     * itself (with {@code orTimeout}, say) ends the wait as the token would; a handle that arrives
     * anyway is closed, so no reference or capacity is lost.
     *
     * <p>Every failure goes through the stage: the pool is closed ({@link PoolClosedException}), the
     * token was cancelled already, even if the object is there, or while waiting ({@link
     * java.util.concurrent.CancellationException}: the stage reads as cancelled), the factory failed.
     *
     * <p>The stage completes on the thread whose release granted the wait, or that made the object:
     * it may be attached and inside calls and sections of its own, so a dependent that uses the
     * pool belongs on a thread of its own ({@code thenApplyAsync}).
     *
     * @param key the key
     * @param token cancels the wait for the gate or for capacity
     * @return a stage completed with the handle, or failed as above
     * @throws NullPointerException if {@code key} or {@code token} is null (the only throw)
     */
    public CompletionStage<Handle<V>> acquireAsync(K key, CancellationToken token) {
        return core.acquireAsync(key, token);
    }

    /**
     * As {@link #acquireAsync(Object, CancellationToken)}, the wait limited to {@code timeout}.
     *
     * <pre>{@code
     * pool.acquireAsync("tenant-7", Duration.ofSeconds(2))
     *         .thenAccept(handle -> executor.execute(() -> {
     *             try (handle) {
     *                 handle.call(s -> s.query("select 1"));  // attaches and takes the section
     *             }
     *         }));
     * }</pre>
     *
     * @param key the key
     * @param timeout how long to wait for capacity; zero means do not wait
     * @return a stage completed with the handle, or failed: with an {@link
     *     io.refpool.sync.WaitTimeoutException} (naming the key and the pool, with this call's stack;
     *     the stage does not read as cancelled) if the time ran out, with an {@link
     *     IllegalArgumentException} if {@code timeout} is negative, otherwise as the token form's
     * @throws NullPointerException if an argument is null (the only throw)
     */
    public CompletionStage<Handle<V>> acquireAsync(K key, Duration timeout) {
        return core.acquireAsync(key, timeout);
    }

    /**
     * Applies every release pending when it is called (handles closed off-attachment, evictions
     * queued by the idle cache) before it returns: it attaches as needed, applies what is queued,
     * and waits while other threads finish applying batches they took before the call. A host calls
     * it before reading {@link #stats()} for a report, or before shutting a tenant down.
     *
     * <pre>{@code
     * Handle<Session> handle = pool.attached(() -> pool.acquire("tenant-7"));
     * handle.close();                  // not attached: a pending release
     * pool.flush();                    // applied: the session is idle (or disposed) now
     * }</pre>
     *
     * <p>In {@code GLOBAL} mode it waits with the gate given up, where an acquire gives it up while
     * its factory runs, and takes it back before it returns: the thread applying such a batch may
     * have given the one gate up inside it and need it back. In the shared modes a flush nested in
     * an attachment waits holding it, so that {@link #close()} and {@link #stopTheWorld()} still
     * wait for that attachment (a function or a factory that flushes is never overtaken by them),
     * and a flush that attached for itself waits with the gate given up. So there, do not flush
     * inside an attachment while another thread's disposer may give the gate up ({@link
     * Attachment#detached}) with a {@code stopTheWorld()} queued: that thread would take the gate
     * back behind the stop, which waits for the flush. Called from a disposer, it applies what
     * is queued and does not wait for the batch that runs the disposer; inside {@link
     * #stopTheWorld()}, which keeps the gate, it applies what is queued and does not wait for other
     * threads' batches, whose threads wait for the stop to end; so does a {@code GLOBAL} flush in an
     * async function ({@link #attachAsync}, {@link #callAsync}), which keeps the one gate too; so
     * does a flush from a factory or a validator, whose creation or check another batch's disposer
     * may be waiting for. While a close runs it waits for
     * the close to finish (which applies what is pending; it returns at once on a thread the close
     * waits for); once the pool is closed it applies the releases of handles closed since, which
     * drainer threads apply without it too. Do not call it while holding an object's section that a
     * disposer may need.
     *
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting to attach or for
     *     another thread's batch (the interrupt status is kept; nothing is lost)
     */
    public void flush() {
        core.control().flush();
    }

    /**
     * Retires the key's current object: acquires from now on get a new one, while holders keep
     * using the retired one, which is disposed (attached) when its last handle closes, at once if it
     * is idle. It attaches as needed.
     *
     * <pre>{@code
     * pool.invalidate("tenant-7");     // the tenant's script changed: the next call gets a fresh session
     * }</pre>
     *
     * @param key the key
     * @return whether an object was retired; {@code false} if the key has none (or it was retired
     *     already, or is being disposed by another path: {@code clearIdle}, an eviction, capacity)
     * @throws NullPointerException if {@code key} is null
     * @throws PoolClosedException if the pool is closed
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting to attach
     */
    public boolean invalidate(K key) {
        return core.control().invalidate(key);
    }

    /**
     * Retires the key's current object only if it is {@code object}: for a caller that found the
     * object it used bad, and must not retire the healthy replacement another thread made meanwhile
     * (as commons-pool2's {@code invalidateObject(key, obj)}). Inside {@code call}, this is how the
     * function retires the object it was given.
     *
     * <pre>{@code
     * pool.run("tenant-7", session -> {
     *     if (session.query("select 1") == null) {
     *         pool.invalidate("tenant-7", session);   // this one, not a newer one
     *     }
     * });
     * }</pre>
     *
     * @param key the key
     * @param object the object to retire, compared by identity
     * @return whether {@code object} was the key's current object and this call retired it
     * @throws NullPointerException if an argument is null
     * @throws PoolClosedException if the pool is closed
     */
    public boolean invalidate(K key, V object) {
        return core.control().invalidate(key, object);
    }

    /**
     * Creates the objects of {@code keys} ahead of demand, so they sit idle until acquired: on the
     * pool's {@linkplain Builder#executor executor} if the builder set one, else on the library's
     * call threads ({@code refpool-call-N}), one key at a time. A warm-up never holds or
     * waits for the gate, in any mode: a factory it runs holds up no other key's request and no
     * {@link #stopTheWorld()}, and one single-thread executor may serve both {@link
     * Builder#executor executor} and {@link Builder#callExecutor callExecutor}. Each object it makes
     * is handed to the pool at once; the warm-up's reference to it goes back as a handle closed off
     * the attachment does, and is applied before the stage completes if the gate is free, otherwise
     * when the gate is next given up (until then {@link #stats()} counts the object live). A
     * key that has an object, live or idle or being created, is skipped. Only free capacity is
     * used: a warm-up never disposes an idle object to make room and never waits for capacity; it
     * stops when {@code maxObjects} is reached. The token is read before each key: cancelled, the
     * warm-up stops and completes with what it made, which stays idle.
     *
     * <pre>{@code
     * pool.warmUp(List.of("tenant-1", "tenant-2"), CancellationToken.none())
     *         .thenAccept(made -> System.out.println(made + " sessions ready"));
     * }</pre>
     *
     * @param keys the keys to create; copied at the call
     * @param token ends the warm-up before its next key
     * @return a stage of how many objects it made; failed with the factory's exception (the keys
     *     before it stay warm), with {@link PoolClosedException} if the pool closed before the
     *     warm-up ended (an object made meanwhile is disposed as {@link DisposalCause#CLOSED}), or
     *     with what the executor threw if it refused the warm-up (nothing was made)
     * @throws NullPointerException if an argument or a key is null
     * @throws IllegalStateException if the pool has no idle cache: each object would be disposed
     *     as soon as it was made
     */
    public CompletionStage<Integer> warmUp(java.util.Collection<? extends K> keys, CancellationToken token) {
        return core.warmUp(keys, token);
    }

    /**
     * Disposes (attached) every object that is idle when the call reaches it; objects in use are
     * left alone. It attaches as needed. With {@linkplain Builder#threadLeases thread leases}, it
     * first ends every lease with no handle or call open, so an object only a lease kept live goes
     * idle and is disposed too.
     *
     * <pre>{@code
     * int freed = pool.clearIdle();    // memory pressure: let every idle session go now
     * }</pre>
     *
     * @return how many idle objects it disposed (in a pool with leases and no idle cache, an object
     *     whose last lease it ended is disposed as its count reaches zero, and not counted here)
     * @throws PoolClosedException if the pool is closed
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting to attach
     */
    public int clearIdle() {
        return core.control().clearIdle();
    }

    /** {@return the pool's name}: the builder's {@code name(...)}, or a generated {@code refpool-N} */
    public String name() {
        return core.name();
    }

    /** {@return a snapshot of the pool's counters} */
    public PoolStats stats() {
        return core.stats();
    }

    /**
     * {@return the keys with an object live or idle now}, a snapshot the caller may keep; weakly
     * consistent: a key acquired, idled or disposed while it is taken may be in it or not
     *
     * <pre>{@code
     * for (String tenant : pool.liveKeys()) {
     *     System.out.println("tenant with an engine: " + tenant);
     * }
     * }</pre>
     */
    public Set<K> liveKeys() {
        return core.liveKeys();
    }

    /** {@return this pool's attach mode} */
    public AttachMode attachMode() {
        return core.attachMode();
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return core.isClosed();
    }

    /**
     * {@link #close()}, waiting at most {@code timeout} for it to finish. {@code close()} waits for
     * every thread still attached, and so for a {@code call} whose function runs: the pool never
     * disposes an object under a running function. This form stops waiting at the limit: the pool
     * is closed to newcomers at once either way, and if threads are still attached the close goes
     * on, on a thread of its own, and finishes (disposing the remaining idle objects) when the last
     * of them leaves. At the limit, the pool's {@linkplain Builder#interrupter interrupter}, if
     * set, is called (on this thread) for every call whose function still runs; without one, a
     * running call is not stopped. Either way its object is disposed after it returns. Also at the
     * limit, every {@code callAsync} function the call executor has not started gives back what it
     * holds and never runs; its stage fails with {@link PoolClosedException}. Called on a
     * thread the close would wait for (one attached to this pool, a factory's, an interrupter's, or a
     * disposer run by the close), it closes as {@code close()} does there, without waiting, and
     * interrupts nothing. Called from a disposer in its {@code detached()} section, whose batch the
     * close waits for, it starts the close on a thread of its own and returns without waiting.
     *
     * <pre>{@code
     * if (!pool.close(Duration.ofSeconds(5))) {
     *     log.warn("closing: calls still running after 5 s; they finish first", null);
     * }
     * }</pre>
     *
     * @param timeout how long to wait; zero reaches the limit at once: the close starts on a thread
     *     of its own, what the limit does is done now, and the result says whether the close
     *     finished by then (seldom: it has just started)
     * @return whether the pool is closed, every object disposed that no open handle keeps
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws NullPointerException if {@code timeout} is null
     */
    public boolean close(Duration timeout) {
        return core.close(timeout);
    }

    /**
     * Closes the pool: refuses new attaches and acquires, fails waiters (an {@code acquireAsync}
     * between two of its waits fails at its next step, possibly just after this returns), applies
     * every pending release (waiting for the batches other threads took before it, unless it is
     * called inside an attachment, from a factory or validator, or from a disposer), disposes idle
     * objects now and live ones as their last handles close, and reports
     * handles still open to the error listener. A handle never closed keeps its object alive (with
     * {@link LeakDetection#OFF}, for ever). It waits for running calls, and for a {@code callAsync}
     * whose function sits in the call executor's queue (it holds its attachment):
     * {@link #close(Duration)} bounds that wait. Idempotent. Called from a warm-up's factory, whose
     * creation every close waits for, from the interrupter, whose call it waits for, or from an
     * error listener told of a {@link Builder#heldTooLong heldTooLong} hold (on the thread every
     * pool's check shares), it returns without waiting for the close, which goes on on another
     * thread and finishes after the factory, the call or the hold returns. Called from a {@code GLOBAL} factory, which runs with the gate given up,
     * it closes there, without waiting for that creation, whose object is disposed when its count
     * reaches zero. Called from a disposer, it closes there, and the idle objects are disposed
     * before it returns; inside the disposer's {@code detached()} section it does so too, unless
     * another close is running, which waits for the disposer's batch: then it returns at once.
     */
    @Override
    public void close() {
        core.close();
    }

    /** The implementation, for tests in this package. */
    PoolCore<K, V> core() {
        return core;
    }

    @Override
    public String toString() {
        return "RefPool['" + core.name() + "', " + core.attachMode() + (core.isClosed() ? ", closed" : "") + ", "
                + core.stats() + "]";
    }

    /**
     * Configures a {@link RefPool}.
     *
     * <pre>{@code
     * RefPool<Path, Script> scripts = RefPool.builder(compiler::compile)
     *         .disposer(Script::release)
     *         .idle(cache -> cache.maximumSize(100))
     *         .build();
     * }</pre>
     *
     * @param <K> key type
     * @param <V> object type
     */
    public static final class Builder<K, V> {
        /** {@code null} for {@link RefPool#newBuilder()}: given to {@link #build(ObjectFactory)}. */
        private final ObjectFactory<? super K, ? extends V> factory;

        private Disposer<? super K, ? super V> disposer = (key, value, cause) -> {};
        private AttachMode attachMode = AttachMode.PER_OBJECT;
        private Executor executor;
        private Executor callExecutor;
        private long drainDelayNanos = 100_000_000L;
        private int drainThreshold = 1024;
        private ErrorListener errorListener;
        private int maxObjects = Integer.MAX_VALUE;
        private Consumer<? super Caffeine<Object, Object>> idle;
        private LeakDetection leakDetection = LeakDetection.OFF;
        private int leakSampleInterval = 128;
        private String name;
        private boolean strictAccess;
        private Duration defaultWait;
        private Interrupter<? super K, ? super V> interrupter;
        private SectionHooks<? super K, ? super V> sectionHooks;
        private boolean recordTimings;
        private Duration heldTooLong;
        private ObjectValidator<? super K, ? super V> validator;
        private long maxLifetimeNanos;
        private Ticker ticker;
        private long leaseSweepNanos;

        private Builder(ObjectFactory<? super K, ? extends V> factory) {
            this.factory = factory;
        }

        /**
         * Sets what disposes an object; it runs attached, exactly once per object, and may throw a
         * checked exception (reported to the error listener). Default: nothing.
         *
         * <pre>{@code
         * RefPool.newBuilder().disposer(Interpreter::close).build(Interpreter::new);
         * }</pre>
         *
         * @param disposer the disposer
         * @param <K1> the key type, narrowed
         * @param <V1> the object type, narrowed to what {@code disposer} takes
         * @return this builder
         */
        @SuppressWarnings("unchecked") // narrows the builder's own type parameters, as Caffeine's does
        public <K1 extends K, V1 extends V> Builder<K1, V1> disposer(
                PoolConsumer<? super V1, ? extends Exception> disposer) {
            Objects.requireNonNull(disposer, "disposer");
            Builder<K1, V1> self = (Builder<K1, V1>) this;
            self.disposer = (key, value, cause) -> disposer.accept(value);
            return self;
        }

        /**
         * Sets what disposes an object, told its key and the {@link DisposalCause}; it runs attached,
         * exactly once per object, and may throw checked exceptions (reported to the error
         * listener). Default: nothing.
         *
         * <pre>{@code
         * RefPool.builder(engine::open).disposer((tenant, session, cause) -> session.close());
         * }</pre>
         *
         * @param disposer the disposer
         * @param <K1> the key type, narrowed to what {@code disposer} takes
         * @param <V1> the object type, narrowed to what {@code disposer} takes
         * @return this builder
         */
        @SuppressWarnings("unchecked") // narrows the builder's own type parameters, as Caffeine's does
        public <K1 extends K, V1 extends V> Builder<K1, V1> disposer(Disposer<? super K1, ? super V1> disposer) {
            Objects.requireNonNull(disposer, "disposer");
            Builder<K1, V1> self = (Builder<K1, V1>) this;
            self.disposer = disposer;
            return self;
        }

        /**
         * Sets what stops a call that runs too long: with it, the limit of {@code call(key,
         * timeout, fn)}, {@code run(key, timeout, action)} and {@code callAsync(key, timeout, fn)}
         * bounds the whole call, function included, and a {@code callAsync} whose token is
         * cancelled while its function runs is stopped too; {@link RefPool#close(Duration)} stops
         * the calls still running at its limit. The pool calls the interrupter (once per call, on
         * the timer's, the cancelling or the closing thread) while the function still runs, and
         * retires the object after the call if it answers {@link Interrupter.Outcome#RETIRE}; see
         * {@link Interrupter} for the contract. The same limit, rather than a separate run limit,
         * because a caller who writes {@code call(key, 2 s, fn)} means "an answer within two
         * seconds": time lost waiting for the section is time the function no longer has. Without
         * an interrupter the limit bounds only the waits, and no timer is armed while a function
         * runs. Default: none. The two-key {@code call} has no limit of its own; a bounded {@code close}
         * stops it, calling the interrupter once for each of its objects.
         *
         * <pre>{@code
         * RefPool<String, Session> sessions = RefPool.builder(engine::open)
         *         .interrupter((tenant, session) -> {
         *             session.close();
         *             return Interrupter.Outcome.RETIRE;
         *         })
         *         .build();
         * }</pre>
         *
         * @param interrupter the interrupter
         * @param <K1> the key type, narrowed to what {@code interrupter} takes
         * @param <V1> the object type, narrowed to what {@code interrupter} takes
         * @return this builder
         * @throws NullPointerException if {@code interrupter} is null
         */
        @SuppressWarnings("unchecked") // narrows the builder's own type parameters, as Caffeine's does
        public <K1 extends K, V1 extends V> Builder<K1, V1> interrupter(
                Interrupter<? super K1, ? super V1> interrupter) {
            Objects.requireNonNull(interrupter, "interrupter");
            Builder<K1, V1> self = (Builder<K1, V1>) this;
            self.interrupter = interrupter;
            return self;
        }

        /**
         * Checks an idle object each time an acquire revives it (its count went to zero and it was
         * kept idle); an object in use is never checked, so the check costs nothing on the way to a
         * live object, and nothing at all when not set. A refusal or a throw disposes the object as
         * {@link DisposalCause#FAILED_VALIDATION} and the acquire goes on with a new one; acquirers
         * of the key that come during the check wait for its verdict. Only an object the idle cache
         * kept is revived, so it needs {@link #idle idle(...)}: {@link #build()} refuses a validator
         * without it. Default: none.
         *
         * <pre>{@code
         * RefPool<String, Session> sessions = RefPool.builder(engine::open)
         *         .idle(cache -> cache.maximumSize(16))
         *         .validator((tenant, session) -> session.query("select 1") != null)
         *         .build();
         * }</pre>
         *
         * @param validator the check; see {@link ObjectValidator}
         * @param <K1> the key type, narrowed to what {@code validator} takes
         * @param <V1> the object type, narrowed to what {@code validator} takes
         * @return this builder
         */
        @SuppressWarnings("unchecked") // narrows the builder's own type parameters, as Caffeine's does
        public <K1 extends K, V1 extends V> Builder<K1, V1> validator(
                ObjectValidator<? super K1, ? super V1> validator) {
            Objects.requireNonNull(validator, "validator");
            Builder<K1, V1> self = (Builder<K1, V1>) this;
            self.validator = validator;
            return self;
        }

        /**
         * Sets hooks run when a thread takes an object's section and when it leaves it: around the
         * function of {@code call}, {@code run} and {@code callAsync} in {@link AttachMode#PER_OBJECT}
         * mode, and around {@link Handle#section()} and {@link Handle#sectionAsync} in any mode; see
         * {@link SectionHooks} for where they run and what a failure does. Default: none.
         *
         * <pre>{@code
         * RefPool<String, Session> sessions = RefPool.builder(engine::open)
         *         .sectionHooks(SectionHooks.of(
         *                 (String tenant, Session s) -> s.ping(), (String tenant, Session s) -> s.refresh()))
         *         .build();
         * }</pre>
         *
         * @param sectionHooks the hooks
         * @param <K1> the key type, narrowed to what the hooks take
         * @param <V1> the object type, narrowed to what the hooks take
         * @return this builder
         * @throws NullPointerException if {@code sectionHooks} is null
         */
        @SuppressWarnings("unchecked") // narrows the builder's own type parameters, as Caffeine's does
        public <K1 extends K, V1 extends V> Builder<K1, V1> sectionHooks(
                SectionHooks<? super K1, ? super V1> sectionHooks) {
            Objects.requireNonNull(sectionHooks, "sectionHooks");
            Builder<K1, V1> self = (Builder<K1, V1>) this;
            self.sectionHooks = sectionHooks;
            return self;
        }

        /**
         * Retires objects older than {@code maxLifetime}, as {@link DisposalCause#LIFETIME}: when
         * their count next reaches zero, or when an acquire would revive one from idle; never under
         * an open handle or a running call. Each object's limit is shortened by a jitter of up to a
         * tenth of {@code maxLifetime}, so objects created together do not all retire together. The
         * age is read from the {@link #ticker ticker} when an object is created, reaches zero or is
         * revived, never on the acquire of an object in use. Default: none.
         *
         * <pre>{@code
         * RefPool<String, Session> sessions = RefPool.builder(engine::open)
         *         .idle(cache -> cache.maximumSize(16))
         *         .maxLifetime(Duration.ofHours(1))   // each lives 54 to 60 minutes
         *         .build();
         * }</pre>
         *
         * @param maxLifetime the limit, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code maxLifetime} is not positive; the builder is
         *     unchanged
         * @throws NullPointerException if {@code maxLifetime} is null
         */
        public Builder<K, V> maxLifetime(Duration maxLifetime) {
            this.maxLifetimeNanos = positiveNanos(maxLifetime, "maxLifetime");
            return this;
        }

        /**
         * Lets each thread that uses an object again and again keep one reference to it, a
         * <em>lease</em>, and count its own handles there: an {@link RefPool#acquire(Object) acquire}
         * or {@link RefPool#call(Object, PoolFunction) call} of a leased object, and the close of its handle, then write nothing
         * another core's request writes, so requests on the same hot objects scale with cores. A
         * lease ends when the thread has not used it for between {@code keepUnused} and twice that,
         * when its thread ends, when its object is invalidated, on {@link RefPool#clearIdle()} (a lease
         * with no handle open) and on {@link RefPool#close()}. Default: no leases.
         *
         * <pre>{@code
         * RefPool<String, Interpreter> tenants = RefPool.builder(Interpreter::new)
         *         .attachMode(AttachMode.SHARED)
         *         .idle(cache -> cache.maximumSize(64))
         *         .threadLeases(Duration.ofSeconds(1))
         *         .build();
         * }</pre>
         *
         * <p>What a lease changes: a leased object stays live while no handle is open (its count
         * holds the lease), so it is neither idle nor in the idle cache, {@link PoolStats} counts it
         * live, and its disposer runs only after its last lease ended. A thread leases after its
         * first 32 acquires of the pool (a thread made for one request never does), up to 256
         * objects per pool. Handles from {@code acquireAsync}, from a pool with leak detection or an
         * observer ({@code recordTimings}, {@code heldTooLong}), and {@code callAsync} never borrow
         * from a lease; {@link Handle#share()} makes an ordinary handle.
         *
         * <p>With {@link #maxObjects}, a creation short of capacity first ends every lease that
         * lends nothing now (an object only a lease kept live then idles or is disposed, as the
         * bound needs), and an {@code acquireAsync} that waits in line for capacity ends every lease
         * (one in use when its handles close); either way no lease is made for the next {@code
         * keepUnused} to twice that, so a bound below the objects the threads use runs as a pool without leases
         * would, and no lease is made while anyone waits in line. With a
         * {@link #validator validator} or {@link #maxLifetime}, every lease ends at each sweep, used
         * or not, so a leased object reaches zero (where its age is checked) and is revived,
         * checked, at least every {@code keepUnused}.
         *
         * @param keepUnused how long a lease its thread does not use is kept, at least; positive
         * @return this builder
         * @throws IllegalArgumentException if {@code keepUnused} is not positive; the builder is
         *     unchanged
         * @throws NullPointerException if {@code keepUnused} is null
         */
        public Builder<K, V> threadLeases(Duration keepUnused) {
            this.leaseSweepNanos = positiveNanos(keepUnused, "threadLeases(keepUnused)");
            return this;
        }

        /**
         * {@return {@code duration} in nanoseconds, at most {@code Long.MAX_VALUE / 2}} (centuries:
         * the same as none, without overflow)
         *
         * @throws IllegalArgumentException if it is not positive, naming {@code what}
         */
        private static long positiveNanos(Duration duration, String what) {
            Objects.requireNonNull(duration, what);
            if (duration.isZero() || duration.isNegative()) {
                throw new IllegalArgumentException(what + " must be positive, was " + duration);
            }
            try {
                return Math.min(duration.toNanos(), Long.MAX_VALUE / 2);
            } catch (ArithmeticException tooLong) {
                return Long.MAX_VALUE / 2;
            }
        }

        /**
         * Sets the pool's time source, read for {@link #maxLifetime}; it is also the idle cache's,
         * unless the {@link #idle idle} configurer sets one of its own. A ticker that throws is
         * reported as {@link PoolError.Kind#REVIVE_CHECK_FAILED}: reading an object's age, the object
         * is kept; timing a new object, the acquire fails with the ticker's exception before the
         * factory runs, and nothing is made. The idle cache reads it too: a put it fails is reported
         * as {@link PoolError.Kind#IDLE_CACHE_FAILED}, and the object that was to idle is disposed.
         * Default: {@link Ticker#systemTicker()}.
         *
         * <pre>{@code
         * var now = new java.util.concurrent.atomic.AtomicLong(); // a test's clock, moved by hand
         * RefPool<String, Session> sessions = RefPool.builder(engine::open)
         *         .maxLifetime(Duration.ofMinutes(10))
         *         .ticker(now::get)
         *         .build();
         * }</pre>
         *
         * @param ticker the time source, in nanoseconds
         * @return this builder
         */
        public Builder<K, V> ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * Bounds every blocking wait that is given no limit of its own: the wait for the gate
         * ({@code attach()}, {@code stopTheWorld()}, {@code call}, {@code run}, {@code attached}) and
         * for an object's section ({@code call} and {@code run} in {@code PER_OBJECT} mode,
         * {@code Handle.call}, {@code Handle.section()}). A wait that runs out throws
         * {@link io.refpool.sync.WaitTimeoutException}, as the timed forms do. A resource that is
         * free is taken at once: the request path arms no timer. Forms with a limit or a token of
         * their own keep theirs. Default: none, a blocking wait waits until it is granted.
         *
         * <pre>{@code
         * RefPool<String, Session> sessions = RefPool.newBuilder()
         *         .defaultWait(Duration.ofSeconds(5))   // as commons-pool2's maxWait
         *         .build(engine::open);
         * }</pre>
         *
         * @param defaultWait the limit, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code defaultWait} is not positive; the builder is
         *     unchanged
         * @throws NullPointerException if {@code defaultWait} is null
         */
        public Builder<K, V> defaultWait(Duration defaultWait) {
            Objects.requireNonNull(defaultWait, "defaultWait");
            if (defaultWait.isZero() || defaultWait.isNegative()) {
                throw new IllegalArgumentException("defaultWait must be positive, was " + defaultWait);
            }
            this.defaultWait = defaultWait;
            return this;
        }

        /**
         * Sets the attach mode. Default: {@link AttachMode#PER_OBJECT} (see {@link AttachMode} for
         * which mode a host needs).
         *
         * @param attachMode the mode
         * @return this builder
         */
        public Builder<K, V> attachMode(AttachMode attachMode) {
            this.attachMode = Objects.requireNonNull(attachMode, "attachMode");
            return this;
        }

        /**
         * Sets where the drainer runs (it attaches, so it may wait for the gate) and where {@link
         * RefPool#warmUp warmUp} runs. Default: for the drainer, a set of daemon threads that every
         * pool shares ({@code refpool-drainer-N}), which run nothing else of a pool's but the
         * disposers of the releases they apply: a factory or an {@code attachAsync} function whose
         * wait a drain granted runs on the library's call threads instead; for warm-ups, those call
         * threads.
         *
         * @param executor the executor
         * @return this builder
         */
        public Builder<K, V> executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * Sets where {@link RefPool#callAsync callAsync} runs its function once every wait is
         * granted. Default: daemon threads of the library's ({@code refpool-call-N}), made when none
         * is idle, reused, and ended after a minute idle. The function never runs on the caller
         * inside {@code callAsync}, nor on the thread whose release granted its wait; a task this
         * executor runs on the handing thread, rejects, or fails to take, runs on a new thread of the
         * pool's own instead.
         *
         * <p>A function queued here holds what its waits were granted: its attachment and, in {@code
         * PER_OBJECT} mode, its object's section (in {@code GLOBAL} mode, the one gate). On an
         * executor with fewer threads than the calls that may wait inside their function, a running
         * function can wait for one queued behind it on the same thread, and neither ever runs: a
         * nested {@code call} of a key whose queued function holds its section, or, in {@code GLOBAL}
         * mode, the gate taken back in line after a wait for a creation or a section. Give such an
         * executor a thread for each call that may wait inside its function, as the default does.
         *
         * <pre>{@code
         * ExecutorService scripts = Executors.newFixedThreadPool(8);
         * RefPool<String, Session> sessions = RefPool.builder((String tenant) -> engine.open(tenant))
         *         .attachMode(AttachMode.PER_OBJECT)
         *         .callExecutor(scripts)
         *         .build();
         * }</pre>
         *
         * @param callExecutor the executor
         * @return this builder
         */
        public Builder<K, V> callExecutor(Executor callExecutor) {
            this.callExecutor = Objects.requireNonNull(callExecutor, "callExecutor");
            return this;
        }

        /**
         * Sets how long releases may stay pending with nobody attaching before the drainer applies
         * them. Default: 100 ms.
         *
         * @param drainDelay the delay, positive
         * @return this builder
         */
        public Builder<K, V> drainDelay(Duration drainDelay) {
            Objects.requireNonNull(drainDelay, "drainDelay");
            if (drainDelay.isNegative() || drainDelay.isZero()) {
                throw new IllegalArgumentException("drainDelay must be positive, was " + drainDelay);
            }
            long nanos;
            try {
                nanos = drainDelay.toNanos();
            } catch (ArithmeticException tooLong) {
                nanos = Long.MAX_VALUE;
            }
            this.drainDelayNanos = nanos;
            return this;
        }

        /**
         * Sets how many pending releases make the drainer run at once. Default: 1024.
         *
         * @param drainThreshold the threshold, at least 1
         * @return this builder
         */
        public Builder<K, V> drainThreshold(int drainThreshold) {
            if (drainThreshold < 1) {
                throw new IllegalArgumentException("drainThreshold must be at least 1, was " + drainThreshold);
            }
            this.drainThreshold = drainThreshold;
            return this;
        }

        /**
         * Sets what receives factory and disposer failures, leaks and close reports. Default: a
         * {@link System.Logger} named {@code io.refpool}, at {@code WARNING}.
         *
         * @param errorListener the listener
         * @return this builder
         */
        public Builder<K, V> errorListener(ErrorListener errorListener) {
            this.errorListener = Objects.requireNonNull(errorListener, "errorListener");
            return this;
        }

        /**
         * Bounds the objects that exist at once, live plus idle. Default: unbounded.
         *
         * @param maxObjects the bound, at least 1
         * @return this builder
         */
        public Builder<K, V> maxObjects(int maxObjects) {
            if (maxObjects < 1) {
                throw new IllegalArgumentException("maxObjects must be at least 1, was " + maxObjects);
            }
            this.maxObjects = maxObjects;
            return this;
        }

        /**
         * Keeps objects whose count reached zero in a Caffeine cache, configured by
         * {@code configurer} (size, weight, expiry; a scheduler is added so expiry happens without
         * traffic, unless the configurer sets one, and the cache's maintenance runs on the thread
         * that wrote to it, unless the configurer sets an executor). Evicted objects are disposed,
         * attached. The
         * configurer must not set an eviction listener, nor weak or soft keys or values (refused:
         * the pool holds what it pools strongly until it disposes it). A removal listener it sets is told
         * of the pool's objects as they leave the cache (evicted, invalidated, cleared, closed),
         * which the pool disposes itself: it may record them, never dispose them. Default: no idle
         * cache; objects are disposed at count zero.
         *
         * @param configurer configures the cache builder
         * @return this builder
         */
        public Builder<K, V> idle(Consumer<? super Caffeine<Object, Object>> configurer) {
            this.idle = Objects.requireNonNull(configurer, "configurer");
            return this;
        }

        /**
         * Sets leak detection. Default: {@link LeakDetection#OFF}.
         *
         * @param leakDetection the mode
         * @return this builder
         */
        public Builder<K, V> leakDetection(LeakDetection leakDetection) {
            this.leakDetection = Objects.requireNonNull(leakDetection, "leakDetection");
            return this;
        }

        /**
         * Names the pool. The name appears in the messages of calls refused after close, in JFR
         * events ({@code pool} field) and in the names of the library's drainer threads while they
         * drain this pool. Default: {@code refpool-N}, with {@code N} counting the pools built
         * without a name.
         *
         * @param name the name, not blank
         * @return this builder
         * @throws IllegalArgumentException if {@code name} is blank
         */
        public Builder<K, V> name(String name) {
            Objects.requireNonNull(name, "name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
            }
            this.name = name;
            return this;
        }

        /**
         * Sets how many handles {@link LeakDetection#SAMPLED} tracks: one in {@code oneIn}, drawn at
         * random per acquire. Default: one in 128. {@code 1} tracks every handle (with
         * {@code SAMPLED}'s reporting, leaks only: double closes are reported only by {@code PARANOID}).
         *
         * @param oneIn the sampling interval, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code oneIn} is less than 1
         */
        public Builder<K, V> leakSamplingRate(int oneIn) {
            if (oneIn < 1) {
                throw new IllegalArgumentException(
                        "leakSamplingRate must be at least 1 (one handle in oneIn is tracked)," + " was " + oneIn);
            }
            this.leakSampleInterval = oneIn;
            return this;
        }

        /**
         * Makes {@link Handle#get()} check its caller: it throws {@link IllegalStateException},
         * naming the key and the thread, unless the calling thread is attached to the pool and, in
         * {@link AttachMode#PER_OBJECT} mode, holds the object's section (inside {@code call} or
         * {@code callAsync}, under {@link Handle#section()}, a section granted to
         * {@link Handle#sectionAsync} and not yet released, or inside {@code pool.stopTheWorld()}).
         * Default: off. When on, a {@code get()} costs a thread-local lookup more on a thread other
         * than the handle's opener, and in {@code PER_OBJECT} mode two acquire loads (the section
         * and its holder); {@code pool.call} hands the function the object without a handle and
         * checks nothing. The {@code strictRequest} rows of {@code TenantBenchmark} measure what
         * it costs (docs/performance.md, "Per-tenant engines").
         *
         * @param strictAccess whether to check
         * @return this builder
         */
        public Builder<K, V> strictAccess(boolean strictAccess) {
            this.strictAccess = strictAccess;
            return this;
        }

        /**
         * Makes the pool time its waits for objects and sections, each use of an object (a call's
         * function, a handle from acquire to close) and each creation, for the timers of
         * {@link RefPoolMetrics}. Default: off; off, the pool reads no clock for them.
         *
         * <pre>{@code
         * RefPool<String, Session> timed = RefPool.builder(engine::open).recordTimings(true).build();
         * new RefPoolMetrics(timed).bindTo(registry); // refpool.wait{resource=object}, refpool.use, ...
         * }</pre>
         *
         * <p>On, an acquire or call reads the clock two or three times more, and every handle is
         * made with a small record of its start.
         *
         * @param recordTimings whether to record timings
         * @return this builder
         */
        public Builder<K, V> recordTimings(boolean recordTimings) {
            this.recordTimings = recordTimings;
            return this;
        }

        /**
         * Reports each handle, and each {@code call}, {@code run} or {@code callAsync} function (a
         * two-key call under its first key), still open {@code threshold} after it was acquired: once, as
         * {@link PoolError.Kind#HELD_TOO_LONG} to the error listener with the acquiring stack as its
         * cause, as a JFR event {@code io.refpool.HeldTooLong}, and in
         * {@link PoolStats#heldTooLong()}. Nothing is done to the handle or the call. Default: off.
         *
         * <pre>{@code
         * RefPool<String, Session> watched = RefPool.builder(engine::open)
         *         .heldTooLong(Duration.ofSeconds(30))
         *         .errorListener(error -> log.warn(error.message(), error.cause()))
         *         .build();
         * }</pre>
         *
         * <p>On, every acquire records its stack trace (as {@link LeakDetection#PARANOID} does), and
         * a check on a shared daemon thread looks at the open handles every quarter of the threshold
         * (at most every second), so a report comes within about 1.25 times the threshold. A handle
         * reported and later closed is not reported again. A listener told on that thread may close
         * the pool: the close goes on on a thread of its own, as it waits for the call reported.
         * Off, nothing is recorded.
         *
         * @param threshold how long a handle or call may stay open unreported, positive
         * @return this builder
         * @throws IllegalArgumentException if {@code threshold} is zero or negative
         */
        public Builder<K, V> heldTooLong(Duration threshold) {
            Objects.requireNonNull(threshold, "threshold");
            if (threshold.isNegative() || threshold.isZero()) {
                throw new IllegalArgumentException("heldTooLong threshold must be positive, was " + threshold);
            }
            this.heldTooLong = threshold;
            return this;
        }

        /**
         * Builds the pool.
         *
         * @return the pool
         * @throws IllegalArgumentException if the idle configurer sets an eviction listener
         * @throws IllegalStateException if a {@link #validator validator} is set without
         *     {@link #idle idle(...)}: no object would ever be checked
         */
        public RefPool<K, V> build() {
            if (factory == null) {
                throw new IllegalStateException("build() on a builder from RefPool.newBuilder(), which has no factory:"
                        + " give it to build(factory)");
            }
            return build(factory, disposer);
        }

        /**
         * Builds the pool with {@code factory}, for a builder from {@link RefPool#newBuilder()}; the
         * key and object types come from the variable the pool is assigned to.
         *
         * <pre>{@code
         * RefPool<String, Interpreter> pool = RefPool.newBuilder().build(Interpreter::new);
         * }</pre>
         *
         * @param factory creates the object of a key, and may throw checked exceptions (acquirers
         *     then get an {@link ObjectCreationException}); runs attached, outside every internal lock
         * @param <K1> key type (with {@code equals}/{@code hashCode})
         * @param <V1> object type
         * @return the pool
         * @throws NullPointerException if {@code factory} is null
         * @throws IllegalStateException if this builder came with a factory
         *     ({@link RefPool#builder(ObjectFactory)}): use {@link #build()}; or if a {@link #validator
         *     validator} is set without {@link #idle idle(...)}
         */
        @SuppressWarnings("unchecked") // K1 and V1 narrow K and V; the disposer was given for K and V
        public <K1 extends K, V1 extends V> RefPool<K1, V1> build(ObjectFactory<? super K1, ? extends V1> factory) {
            Objects.requireNonNull(factory, "factory");
            if (this.factory != null) {
                throw new IllegalStateException(
                        "build(factory) on a builder that was given a factory by RefPool.builder(factory):"
                                + " call build()");
            }
            return ((Builder<K1, V1>) this).build(factory, (Disposer<? super K1, ? super V1>) disposer);
        }

        @SuppressWarnings("unchecked") // K1 and V1 narrow K and V, as the disposer's do
        private <K1, V1> RefPool<K1, V1> build(
                ObjectFactory<? super K1, ? extends V1> factory, Disposer<? super K1, ? super V1> disposer) {
            if (validator != null && idle == null) {
                throw new IllegalStateException("validator(...) is set without idle(...): with no idle cache an"
                        + " object is disposed when its count reaches zero, so none is ever revived and checked");
            }
            return new RefPool<>(new PoolCore<>(new PoolSettings<K1, V1>(
                    factory,
                    disposer,
                    attachMode,
                    executor,
                    callExecutor,
                    drainDelayNanos,
                    drainThreshold,
                    errorListener,
                    maxObjects,
                    idle,
                    leakDetection,
                    leakSampleInterval,
                    strictAccess,
                    name,
                    defaultWait,
                    (Interrupter<? super K1, ? super V1>) interrupter,
                    (SectionHooks<? super K1, ? super V1>) sectionHooks,
                    recordTimings,
                    heldTooLong,
                    (ObjectValidator<? super K1, ? super V1>) validator,
                    maxLifetimeNanos,
                    ticker,
                    leaseSweepNanos)));
        }
    }
}
