package io.refpool.core;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * An open reference to a pooled object; the object lives while any handle to it is open.
 *
 * <pre>{@code
 * try (Attachment attached = pool.attach();
 *         Handle<Session> session = pool.acquire("tenant-7")) {
 *     Handle<Session> copy = session.share();          // +1, may be handed to another thread
 *     executor.execute(() -> {
 *         try (copy) {                                 // closed off-attachment: deferred
 *             copy.call(s -> s.query("select 2"));  // attached, in the object's section
 *         }
 *     });
 *     session.call(s -> s.query("select 1"));
 * }
 * }</pre>
 *
 * <p>A handle is a capability: nothing but its own {@link #close()} (or the leak detector, once the
 * handle is unreachable) gives up its reference. Closing on a thread attached to the pool decrements
 * the count at once; closing anywhere else enqueues a pending decrement that the next attach applies.
 *
 * <p><b>Sections.</b> {@link #section()} takes the object's own FIFO lock, shared by every handle
 * to that object; different objects never contend. Take it while attached (the blocking forms refuse
 * an unattached thread while the pool is open; after close nobody can attach, and they need no
 * attachment), and never wait to attach
 * (or for {@code pool.stopTheWorld()}) while holding one: a section stays held while its thread waits.
 * To hold two objects' sections at once, use {@code pool.call(K, K, BiFunction)}, which takes them
 * in one global order; any other nesting of sections across objects is the caller's order to keep.
 *
 * <pre>{@code
 * try (Attachment attached = pool.attach();
 *         Handle<Session> session = pool.acquire("tenant-7");
 *         Guard section = session.section()) {        // no other thread in this object
 *     session.get().query("update counters set n = n + 1");
 * }
 * }</pre>
 */
public interface Handle<V> extends AutoCloseable {
    /**
     * {@return the pooled object}
     *
     * @throws IllegalStateException if this handle is closed; with {@code strictAccess(true)}, also
     *     if the calling thread is not attached to the pool or, in {@link AttachMode#PER_OBJECT}
     *     mode, holds neither the object's section nor {@code pool.stopTheWorld()}
     */
    V get();

    /**
     * Takes the object's section, parking while another holder has it (FIFO). The guard
     * holds a reference of its own: closing this handle while the section is held is allowed, and
     * the object lives until the guard closes too.
     *
     * @return the guard; its {@code close()} releases the section, once
     * @throws IllegalStateException if this handle is closed, the calling thread is not attached to
     *     the open pool, or it already holds this object's section (a second hold would wait for
     *     itself)
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting (the interrupt
     *     status is kept); nothing is held
     */
    Guard section();

    /**
     * Takes the object's section unless {@code token} is cancelled while waiting.
     *
     * @param token cancels the wait
     * @return the guard
     * @throws IllegalStateException as for {@link #section()}
     * @throws java.util.concurrent.CancellationException if the token is cancelled (before the
     *     call too, whether or not the section is free); nothing is held
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     * @throws NullPointerException if {@code token} is null
     */
    Guard section(CancellationToken token);

    /**
     * As {@link #section()}, waiting at most {@code timeout} for the section.
     *
     * <pre>{@code
     * try (Guard section = handle.section(Duration.ofMillis(100))) {
     *     handle.get().ping();
     * }
     * }</pre>
     *
     * @param timeout how long to wait; zero means do not wait
     * @return the guard; its {@code close()} releases the section, once
     * @throws io.refpool.sync.WaitTimeoutException if the section was not free in time (it names the
     *     key and the pool)
     * @throws io.refpool.sync.WaitInterruptedException if interrupted while waiting
     * @throws IllegalStateException as for {@link #section()}
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws NullPointerException if {@code timeout} is null
     */
    Guard section(Duration timeout);

    /**
     * Takes the object's section without parking a thread: the stage completes with the
     * guard when the section is granted. The section is then held by no thread in particular: with
     * {@code strictAccess(true)} any thread attached to the pool may use the object until the guard
     * closes. A caller that cancels or completes the returned future itself ends the wait; a
     * section granted anyway is released. If that {@code cancel} returns {@code false}, the stage
     * had completed first and its guard is the caller's to close. That includes a timed {@code
     * get} that throws {@code InterruptedException} on a stage already completed: it checks the
     * interrupt before the result. Do not wait to attach while the guard is open: the attach can
     * queue behind a {@link RefPool#stopTheWorld()} that waits for a reader that waits for this
     * section. To use the object attached from async code, use {@link RefPool#callAsync}.
     *
     * @param token cancels the wait
     * @return a stage completed with the guard, or failed with a
     *     {@link java.util.concurrent.CancellationException} (the stage then reads as cancelled) or
     *     an {@link IllegalStateException} (handle closed, or the calling thread holds the section
     *     already)
     * @throws NullPointerException if {@code token} is null
     */
    CompletionStage<Guard> sectionAsync(CancellationToken token);

    /**
     * Runs {@code fn} on the object as {@code pool.call} would: attaches (nested is fine), takes the
     * object's section in {@link AttachMode#PER_OBJECT} mode, runs {@code fn}, and releases the
     * section and the attachment, also when {@code fn} throws; what {@code fn} throws reaches the
     * caller unchanged. The handle stays open. The call keeps the object for itself while it runs,
     * as {@code pool.call} does: a close of the handle meanwhile, on another thread or by {@code fn},
     * never disposes it under {@code fn}. With an {@link Interrupter}, a bounded {@code
     * pool.close(Duration)} interrupts it at its limit, as it does a {@code pool.call}.
     *
     * <pre>{@code
     * Handle<Session> session = kept.get(tenant);   // a handle the host keeps in a map
     * String out = session.call(s -> s.query("select 1"));      // attached, in the section
     * }</pre>
     *
     * @param fn the work on the object
     * @param <T> its result type
     * @param <E> the checked exception {@code fn} may throw
     * @return what {@code fn} returned
     * @throws E what {@code fn} threw
     * @throws IllegalStateException if this handle is closed, or the thread holds this object's
     *     section already
     * @throws PoolClosedException if the pool is closed
     * @throws NullPointerException if {@code fn} is null
     */
    <T, E extends Exception> T call(PoolFunction<? super V, ? extends T, E> fn) throws E;

    /**
     * As {@link #call(PoolFunction)}, for a body that returns nothing.
     *
     * <pre>{@code
     * handle.run(session -> session.execute("vacuum")); // may throw a checked exception
     * }</pre>
     *
     * @param action the work on the object
     * @param <E> the checked exception {@code action} may throw
     * @throws E what {@code action} threw
     * @throws IllegalStateException as for {@link #call(PoolFunction)}
     * @throws PoolClosedException if the pool is closed
     * @throws NullPointerException if {@code action} is null
     */
    default <E extends Exception> void run(PoolConsumer<? super V, E> action) throws E {
        Objects.requireNonNull(action, "action");
        call(value -> {
            action.accept(value);
            return null;
        });
    }

    /**
     * Retires exactly this handle's object: acquires of its key from now on get a new one, while
     * this handle and every other holder keep using it until they close; it is then disposed
     * (attached) with {@link DisposalCause#RETIRED}. A newer object of the key, made after another
     * thread retired this one, is untouched. This handle stays open. It attaches as needed.
     *
     * <pre>{@code
     * try (Handle<Session> session = pool.attached(() -> pool.acquire("tenant-7"))) {
     *     if (!session.call(s -> s.query("select 1")).equals("1")) {
     *         session.invalidate();   // this session is corrupt: the next acquire opens a new one
     *     }
     * }
     * }</pre>
     *
     * @return whether this call retired it ({@code false}: it was retired already)
     * @throws RuntimeException what the key's {@code hashCode} or {@code equals} threw while the object
     *     left the key's slot; the object is retired all the same, and acquires of the key do not get
     *     it
     * @throws IllegalStateException if this handle is closed
     * @throws PoolClosedException if the pool is closed
     */
    boolean invalidate();

    /**
     * Opens another handle to the same object (count + 1). Works on any thread, attached or not, and
     * never waits or defers.
     *
     * @return the new handle, to be closed on its own
     * @throws IllegalStateException if this handle is closed, also by another thread while this
     *     call ran (nothing is then held)
     */
    Handle<V> share();

    /** {@return whether this handle is still open} */
    boolean isOpen();

    /**
     * {@return the key this handle's object was acquired for}; it stays readable after the handle
     * is closed
     */
    Object key();

    /**
     * Gives up this handle's reference: at once if the calling thread is attached, otherwise as a
     * pending decrement. A second close is a no-op and never decrements again.
     */
    @Override
    void close();
}
