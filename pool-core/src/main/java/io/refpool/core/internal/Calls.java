package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.AttachedWork;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.PoolBiFunction;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The closure API: attach, acquire, take the section in {@code PER_OBJECT} mode, run, and release
 * everything in reverse order, also when the function throws.
 *
 * <pre>
 *   step      blocking call          callAsync (no thread parks)
 *   1         attach (nested ok)     acquireAsync: waits for creation and capacity
 *   2         acquire                hold the gate (shared) as an async caller
 *   3         section (PER_OBJECT)   section, async, while the gate is held (PER_OBJECT)
 *   4         run fn                 hand fn to the call executor; it runs there attached, in the
 *                                    section, then releases all
 * </pre>
 *
 * <p><b>Where a {@code callAsync} function runs.</b> Never on the caller inside {@code callAsync},
 * and never on the thread that granted its last wait: a grant completes on the thread that released
 * the gate or the section, which may be attached and inside sections of its own, and the function
 * would run nested in them (its own {@code call} of a key that thread holds would fail, or wait for a
 * section that thread holds while that thread waits for the function). Once every wait is granted,
 * the function is handed to the pool's call executor (the common fork-join pool unless the builder
 * set one), and runs there on a thread that is not attached to the pool. An executor that runs the
 * task on the handing thread, rejects it or fails (even with an {@code Error}), or a thread of it
 * that is attached to this pool already, gets the task moved to a new thread of the pool's own, so
 * the function still runs, and nothing the call holds is lost. No thread parks for a wait.
 *
 * <p>The order is the deadlock rule of sections: a section is waited for only while the gate is
 * held (attached), and a section holder never waits for the gate. So a stop-the-world
 * {@code pool.stopTheWorld()} waits for section holders to finish, never the reverse. Two sections
 * are taken in the objects' creation order ({@link Entry#order}), whatever order the caller names
 * the keys in.
 */
public final class Calls<K, V> {
    private static final AtomicInteger FALLBACK_THREADS = new AtomicInteger();

    private final PoolState pool;
    /** Cancelled when the pool closes: ends every wait of a callAsync. */
    private final CancellationToken closing;

    private final Attacher<K, V> attacher;
    private final Acquirer<K, V> acquirer;
    private final Handles<K, V> handles;
    private final boolean sections;
    /** Where {@code callAsync} functions run. */
    private final Executor executor;

    Calls(
            PoolState pool,
            CancellationToken closing,
            Attacher<K, V> attacher,
            Acquirer<K, V> acquirer,
            Handles<K, V> handles,
            Executor executor) {
        this.pool = pool;
        this.closing = closing;
        this.attacher = attacher;
        this.acquirer = acquirer;
        this.handles = handles;
        this.sections = handles.attachMode() == AttachMode.PER_OBJECT;
        this.executor = executor;
    }

    public <T, E extends Exception> T attached(AttachedWork<? extends T, E> work) throws E {
        Objects.requireNonNull(work, "work");
        AttachState s = attacher.enterClosure("attached()");
        int level = s.depth;
        try {
            return work.get();
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /**
     * The blocking call. The path for a live or idle object (a reference taken without a handle,
     * which nobody sees) is kept small so that the JIT inlines it into the caller with the
     * function; a creation or a wait is {@link #callAcquiring}.
     */
    public <T, E extends Exception> T call(K key, PoolFunction<? super V, ? extends T, E> fn) throws E {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fn, "fn");
        AttachState s = attacher.enterClosure("call()");
        int level = s.depth;
        try {
            Entry<K, V> entry = acquirer.retainExisting(key);
            if (entry == null) {
                return callAcquiring(key, fn, s);
            }
            try {
                return apply(entry, fn);
            } finally {
                handles.releaseAttached(entry, s); // attached: applied at once
            }
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /** {@link #call} of a key with no live or idle object: revive, create, or wait for a creation. */
    private <T, E extends Exception> T callAcquiring(K key, PoolFunction<? super V, ? extends T, E> fn, AttachState s)
            throws E {
        Entry<K, V> entry = acquirer.acquireEntry(key, s);
        try {
            return apply(entry, fn);
        } finally {
            handles.releaseAttached(entry, s);
        }
    }

    /** Runs {@code fn} on the object of {@code entry}, which the caller holds, in its section if the mode says so. */
    private <T, E extends Exception> T apply(Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn) throws E {
        if (!sections) {
            return fn.apply(entry.value);
        }
        return handles.defaultWait == null
                ? Section.apply(entry, fn)
                : Section.apply(entry, fn, handles.defaultWait, pool.name());
    }

    /**
     * Runs {@code work} in the section of {@code entry}, which a handle of the caller keeps alive:
     * unlike {@code Handle.section()} it takes no reference and allocates no guard.
     */
    private <T, E extends Exception> T inSection(Entry<K, V> entry, AttachedWork<T, E> work) throws E {
        Section section = entry.section();
        Guard lockGuard = handles.defaultWait == null
                ? section.enter(entry)
                : section.enterWithin(entry, handles.defaultWait, pool.name());
        try {
            return work.get();
        } finally {
            section.unlock(lockGuard);
        }
    }

    public <T, E extends Exception> T call(K first, K second, PoolBiFunction<? super V, ? extends T, E> fn) throws E {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(second, "second");
        Objects.requireNonNull(fn, "fn");
        boolean oneKey = first.equals(second); // before anything is taken: a key that throws changes nothing
        Attachment attachment = attacher.attach(CancellationToken.none(), false, false);
        try {
            AttachState s = attacher.state();
            Entry<K, V> a = acquirer.acquireEntry(first, s);
            if (oneKey) { // one object, acquired once: an invalidate between two acquires would make two
                try {
                    return runBoth(a, a, fn);
                } finally {
                    handles.releaseAttached(a, s);
                }
            }
            try {
                Entry<K, V> b = acquirer.acquireEntry(second, s);
                try {
                    return runBoth(a, b, fn);
                } finally {
                    handles.releaseAttached(b, s);
                }
            } finally {
                handles.releaseAttached(a, s);
            }
        } finally {
            attachment.close();
        }
    }

    private <T, E extends Exception> T runBoth(
            Entry<K, V> a, Entry<K, V> b, PoolBiFunction<? super V, ? extends T, E> fn) throws E {
        if (!sections) {
            return fn.apply(a.value, b.value);
        }
        if (a == b) { // one object named twice: one section
            return inSection(a, () -> fn.apply(a.value, b.value));
        }
        boolean aFirst = a.order < b.order;
        Entry<K, V> outer = aFirst ? a : b;
        Entry<K, V> inner = aFirst ? b : a;
        return inSection(outer, () -> inSection(inner, () -> fn.apply(a.value, b.value)));
    }

    /**
     * {@code pool.call(key, timeout, fn)} once the handle is acquired within the limit: attaches
     * and takes the section within what is left of it, then runs {@code fn}. The limit bounds the
     * waits, never the function.
     */
    @SuppressWarnings({"unchecked", "try"}) // every handle this pool opens is a PooledHandle; scopes held, not used
    public <T, E extends Exception> T callWithin(
            Handle<V> handle, long deadlineNanos, PoolFunction<? super V, ? extends T, E> fn) throws E {
        Entry<K, V> entry = ((PooledHandle<K, V>) handle).entry();
        try (Attachment attachment = attacher.attach(CancellationToken.none(), left(deadlineNanos), false, false)) {
            if (!sections) {
                return fn.apply(entry.value);
            }
            try (Guard section = Section.enterWithin(handles, entry, left(deadlineNanos))) {
                return fn.apply(entry.value);
            }
        }
    }

    /** {@return what is left until {@code deadlineNanos}}, at least a nanosecond: a free resource is still taken */
    private static Duration left(long deadlineNanos) {
        return Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime()));
    }

    /**
     * {@code callAsync(key, timeout, fn)}: {@link #callAsync} whose waits end after {@code timeout};
     * the stage then fails with a {@link WaitTimeoutException}. The timer starts once the call has
     * taken what was free at once, so a zero timeout means "only if nothing needs waiting for". The
     * limit bounds the waits, never the function: a function already handed to the call executor
     * runs to its end.
     */
    public <T> CompletionStage<T> callAsyncWithin(
            K key, Duration timeout, PoolFunction<? super V, ? extends T, ? extends Exception> fn) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(fn, "fn");
        if (timeout.isNegative()) {
            return CompletableFuture.failedStage(new IllegalArgumentException(
                    "callAsync(" + Keys.describe(key) + ", timeout) with a negative" + " timeout: " + timeout));
        }
        CancellationSource timer = new CancellationSource();
        WaitTimeoutException timedOut = new WaitTimeoutException(
                "key " + Keys.describe(key) + " (its object, the gate and its section) in pool '" + pool.name() + "'",
                timeout); // the caller's stack
        CompletableFuture<T> calling = this.<T>callAsync(key, timer.token(), fn).toCompletableFuture();
        CompletableFuture<T> result = new CompletableFuture<>();
        calling.whenComplete((value, failure) -> {
            boolean fired = timer.token().isCancellationRequested();
            timer.close();
            if (failure == null) {
                result.complete(value);
                return;
            }
            Throwable cause = Waits.unwrapped(failure);
            result.completeExceptionally(fired && cause instanceof CancellationException ? timedOut : cause);
        });
        result.whenComplete((value, failure) -> {
            if (failure != null) {
                timer.cancel(); // the caller gave up: end the waits; the outcome above is ignored
            }
        });
        if (!calling.isDone()) {
            try {
                timer.cancelAfter(timeout);
            } catch (IllegalStateException closedMeanwhile) {
                // the call completed between the check and the arming: nothing to time
            }
        }
        return result;
    }

    /**
     * The async call. Every failure goes through the stage. A caller that completes or cancels the
     * returned future itself ends whichever wait is under way; what was granted is released.
     */
    public <T> CompletionStage<T> callAsync(
            K key, CancellationToken token, PoolFunction<? super V, ? extends T, ? extends Exception> fn) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(fn, "fn");
        if (pool.isClosed()) {
            return CompletableFuture.failedFuture(
                    new PoolClosedException(pool.onClosedPool("callAsync(" + Keys.describe(key) + ")")));
        }
        if (token.isCancellationRequested()) {
            return CompletableFuture.failedFuture(new CancellationException(
                    "callAsync(" + Keys.describe(key) + ") with a token that was already cancelled"));
        }
        CancellationSource waits = CancellationSource.linkedTo(token, closing);
        CompletableFuture<T> result = new CompletableFuture<>();
        result.whenComplete((value, failure) -> {
            if (failure != null) {
                waits.cancel(); // the caller gave up, or a step failed: end the wait under way
            }
            waits.close();
        });
        CompletionStage<Entry<K, V>> acquired;
        try {
            acquired = acquirer.acquireEntryAsync(key, waits.token());
        } catch (Throwable t) { // closed since the check
            result.completeExceptionally(t);
            return result;
        }
        acquired.whenComplete((entry, failure) -> {
            if (failure != null) {
                result.completeExceptionally(unwrap(failure));
            } else if (result.isDone()) {
                handles.release(entry, null);
            } else {
                holdGate(entry, waits.token(), fn, result);
            }
        });
        return result;
    }

    private <T> void holdGate(
            Entry<K, V> entry,
            CancellationToken token,
            PoolFunction<? super V, ? extends T, ? extends Exception> fn,
            CompletableFuture<T> result) {
        attacher.holdGate(token, false).whenComplete((gate, failure) -> {
            if (failure != null) {
                handles.release(entry, null);
                result.completeExceptionally(unwrap(failure));
            } else if (result.isDone()) {
                gate.close();
                handles.release(entry, null);
            } else if (!sections) {
                new AsyncRun<>(entry, gate, null, fn, result).dispatch();
            } else {
                Section.enterAsync(handles, entry, token, true).whenComplete((section, sectionFailure) -> {
                    if (sectionFailure != null) {
                        gate.close();
                        handles.release(entry, null);
                        result.completeExceptionally(unwrap(sectionFailure));
                    } else {
                        new AsyncRun<>(entry, gate, (Section.Held<?, ?>) section, fn, result).dispatch();
                    }
                });
            }
        });
    }

    /**
     * A {@code callAsync} whose waits are all granted: its function, handed to the call executor.
     * The handing thread is recorded while it hands over, so a task that runs inline on it is moved.
     */
    private final class AsyncRun<T> implements Runnable {
        /** The object's reference, which the call gives back when the function returns. */
        private final Entry<K, V> entry;

        private final Guard gate;
        private final Section.Held<?, ?> section;
        private final PoolFunction<? super V, ? extends T, ? extends Exception> fn;
        private final CompletableFuture<T> result;
        /** The thread handing the task over, while it does. */
        private volatile Thread handing;

        AsyncRun(
                Entry<K, V> entry,
                Guard gate,
                Section.Held<?, ?> section,
                PoolFunction<? super V, ? extends T, ? extends Exception> fn,
                CompletableFuture<T> result) {
            this.entry = entry;
            this.gate = gate;
            this.section = section;
            this.fn = fn;
            this.result = result;
        }

        void dispatch() {
            handing = Thread.currentThread();
            try {
                executor.execute(this);
            } catch (Throwable failed) { // rejected, or an Error: the task moves, nothing is lost
                pool.report(
                        PoolError.Kind.CALL_EXECUTOR_FAILED,
                        entry.key,
                        "the call executor of pool '" + pool.name() + "' failed to take a callAsync function"
                                + "; it runs on a thread of the pool's own",
                        failed);
                moveToOwnThread();
            } finally {
                handing = null;
            }
        }

        @Override
        public void run() {
            if (handing == Thread.currentThread() || handles.isAttached()) {
                moveToOwnThread(); // inline on the handing thread, or nested in an attachment here
                return;
            }
            if (result.isDone()) { // the caller gave up while the task was queued
                releaseAll();
                return;
            }
            Calls.this.run(entry, gate, section, fn, result);
        }

        private void moveToOwnThread() {
            Runnable own = () -> {
                if (result.isDone()) {
                    releaseAll();
                } else {
                    Calls.this.run(entry, gate, section, fn, result);
                }
            };
            try {
                Thread thread = new Thread(
                        own, "refpool-call-" + FALLBACK_THREADS.incrementAndGet() + " (pool '" + pool.name() + "')");
                thread.setDaemon(true);
                thread.start();
            } catch (Throwable noThread) { // nothing can run the function: release all, fail the call
                releaseAll();
                result.completeExceptionally(noThread);
            }
        }

        /** Gives back the section, the reference and the gate, attached through the gate held. */
        private void releaseAll() {
            try {
                attacher.runAttached(gate, false, attachment -> {
                    if (section != null) {
                        section.close();
                    }
                    handles.release(entry, null); // attached: applied at once
                    return null;
                });
            } catch (Throwable t) {
                pool.report(
                        PoolError.Kind.CALL_EXECUTOR_FAILED, entry.key, "releasing an abandoned callAsync failed", t);
            }
        }
    }

    /** Runs {@code fn} attached through {@code gate}, then releases section, reference and gate. */
    private <T> void run(
            Entry<K, V> entry,
            Guard gate,
            Section.Held<?, ?> section,
            PoolFunction<? super V, ? extends T, ? extends Exception> fn,
            CompletableFuture<T> result) {
        T value;
        try {
            value = attacher.runAttached(gate, false, attachment -> {
                try {
                    if (section != null) {
                        section.runningOn(Thread.currentThread());
                    }
                    return fn.apply(entry.value);
                } catch (RuntimeException | Error unchecked) {
                    throw unchecked;
                } catch (Exception checked) { // carried out of the attached scope, then unwrapped
                    throw new CheckedFailure(checked);
                } finally {
                    if (section != null) {
                        section.close();
                    }
                    handles.release(entry, null); // attached: applied at once
                }
            });
        } catch (CheckedFailure carried) {
            result.completeExceptionally(carried.getCause());
            return;
        } catch (Throwable t) {
            result.completeExceptionally(t);
            return;
        }
        result.complete(value);
    }

    /** A checked exception of a {@code callAsync} function, on its way to the stage. */
    private static final class CheckedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CheckedFailure(Exception cause) {
            super(null, cause, false, false);
        }
    }

    /** {@return the failure a caller sees: unwrapped, and a wait the pool's close ended as a closed pool} */
    private Throwable unwrap(Throwable failure) {
        Throwable cause = Waits.unwrapped(failure);
        if (cause instanceof CancellationException && pool.isClosed()) {
            return new PoolClosedException("pool '" + pool.name() + "' closed while callAsync() waited");
        }
        return cause;
    }
}
