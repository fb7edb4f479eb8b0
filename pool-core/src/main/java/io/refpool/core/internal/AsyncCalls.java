package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.Registration;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * {@code callAsync}: the closure API without a parked thread. It takes what {@code pool.call}
 * takes, each as a stage, then hands the function to the call executor.
 *
 * <pre>
 *   step   waits for (no thread parks)                  by
 *   1      the object: its creation, capacity in line   {@link Acquirer#acquireEntryAsync}
 *   2      the gate, held shared as an async caller     {@link Attacher#holdGate}
 *   3      the section (PER_OBJECT), gate held          {@link Section#enterAsync}, RESERVED
 *   4      -                                            {@link AsyncRun}: the call executor runs fn
 *                                                       attached, in the section; all released
 * </pre>
 *
 * <p><b>Where the function runs.</b> Never on the caller inside {@code callAsync}, and never on the
 * thread that granted its last wait: a grant completes on the thread that released the gate or the
 * section, which may be attached and inside sections of its own, and the function would run nested
 * in them (its own {@code call} of a key that thread holds would fail, or wait for a section that
 * thread holds while that thread waits for the function). Once every wait is granted, the function
 * is handed to the pool's call executor (the library's call threads unless the builder set one), and
 * runs there on a thread that is not attached to the pool. An executor that runs the task on the
 * handing thread, rejects it or fails (even with an {@code Error}), or a thread of it that is
 * attached to this pool already, gets the task moved to a new thread of the pool's own, so the
 * function still runs, and nothing the call holds is lost.
 *
 * <p>The caller's token, or the caller completing the returned future, ends whichever wait is under
 * way; what was granted is given back. The steps take the gate before the section, as {@link Calls}
 * does: a section is waited for only while the gate is held.
 */
public final class AsyncCalls<K, V> {
    /**
     * A timed call ({@link #callAsyncWithin}): its function's phase, and its timer.
     *
     * <pre>
     *   phase         to           by (one CAS from NOT_STARTED decides)
     *   NOT_STARTED   STARTED      the function's start, on the call executor; without an
     *                              interrupter its timer is closed then (the limit bounds no function)
     *   NOT_STARTED   GIVEN_UP     the call's end before the start: a wait failed, the timer fired,
     *                              or the caller settled the stage; the function never runs
     *
     *   timer         armed by     callAsyncWithin, after the call took what was free at once: with
     *                              an interrupter, at the call's start instead (it bounds the
     *                              function too); never for a zero limit granted everything at once
     *   timer         fired        a wait still under way, or the function still queued on the call
     *                              executor, ends (the stage fails with a WaitTimeoutException)
     * </pre>
     */
    private static final int NOT_STARTED = 0, STARTED = 1, GIVEN_UP = 2;

    private final PoolState pool;
    /** Cancelled when the pool closes: ends every wait of a callAsync. */
    private final CancellationToken closing;

    private final Attacher<K, V> attacher;
    private final Acquirer<K, V> acquirer;
    private final Handles<K, V> handles;
    private final boolean sections;
    /** Where {@code callAsync} functions run. */
    private final Executor executor;
    /** The functions handed to the executor that it has not started: a bounded close abandons them. */
    private final Set<AsyncRun<?>> queued = ConcurrentHashMap.newKeySet();
    /** The interrupter and section hooks, or {@code null} if neither is set. */
    private final RunControl<K, V> runs;

    AsyncCalls(
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
        this.runs = handles.runs;
    }

    /**
     * {@code callAsync(key, timeout, fn)}: {@link #callAsync} whose waits end after {@code timeout};
     * the stage then fails with a {@link WaitTimeoutException}. The timer starts once the call has
     * taken what was free at once, so a zero timeout means "only if nothing needs waiting for": with
     * the object, the gate and the section granted at once, no timer is armed, and the function runs
     * when the call executor starts it. A positive limit bounds the waits, the call executor's queue
     * included, never the function: one that
     * started runs to its end, with the timer disarmed as it starts. With an interrupter the limit bounds the function too, so the timer starts
     * with the call: a function the executor starts, or even finishes, before this method returns
     * is timed, and a zero limit fails the call without running it.
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
        return Waits.offTheDrainer(() -> this.<T>timedCallAsync(key, timeout, fn), value -> {});
    }

    /** {@link #callAsyncWithin}, its arguments checked, on a thread that is not a shared drainer. */
    private <T> CompletionStage<T> timedCallAsync(
            K key, Duration timeout, PoolFunction<? super V, ? extends T, ? extends Exception> fn) {
        CancellationSource timer = new CancellationSource();
        WaitTimeoutException timedOut = new WaitTimeoutException(
                "key " + Keys.describe(key) + " (its object, the gate and its section) in pool '" + pool.name() + "'",
                timeout); // the caller's stack
        boolean boundsFunction = runs != null && runs.interrupts();
        // the limit bounds the function too: it runs from the call (see above)
        CancellationSource limit = boundsFunction ? RunControl.armLimit(timer, timeout) : null;
        // once the function starts, what it throws, a CancellationException included, is its own:
        // only a cancellation before it started is the limit's. Without an interrupter the limit
        // also ends there: its timer is disarmed. The start and the caller's settling race for the
        // phase: a function that starts keeps its limit until it returns, and one whose caller
        // settled the stage first does not run (its limit is disarmed then)
        AtomicInteger phase = new AtomicInteger(NOT_STARTED);
        Supplier<CancellationException> settledFirst = () -> new CancellationException("callAsync(" + Keys.describe(key)
                + ", " + timeout + "): the caller settled the stage before the function started");
        PoolFunction<? super V, ? extends T, ? extends Exception> timed = boundsFunction
                ? value -> {
                    if (!phase.compareAndSet(NOT_STARTED, STARTED)) {
                        throw settledFirst.get();
                    }
                    try {
                        return fn.apply(value);
                    } finally {
                        if (limit != null) {
                            limit.close(); // the function's own end disarms it, whoever settled the stage
                        }
                    }
                }
                : value -> {
                    if (!phase.compareAndSet(NOT_STARTED, STARTED)) {
                        throw settledFirst.get();
                    }
                    timer.close();
                    return fn.apply(value);
                };
        AtomicBoolean grantedAtOnce = new AtomicBoolean();
        CompletableFuture<T> calling =
                this.<T>callAsync(key, timer.token(), timed, fn, grantedAtOnce).toCompletableFuture();
        CompletableFuture<T> result = new CompletableFuture<>();
        calling.whenComplete((value, failure) -> {
            boolean neverStarted = phase.get() != STARTED && phase.compareAndSet(NOT_STARTED, GIVEN_UP);
            if (neverStarted && limit != null) {
                limit.close(); // the function never runs; one that runs keeps its limit
            }
            boolean fired = timer.token().isCancellationRequested() && phase.get() != STARTED;
            timer.close();
            if (failure == null) {
                result.complete(value);
                return;
            }
            if (result.isDone()) {
                return; // the caller settled the stage and so ended the call: its outcome stands, no timeout
            }
            Throwable cause = Waits.unwrapped(failure);
            if (fired && cause instanceof CancellationException) {
                attacher.reportThreadsEndedAttached(); // one may hold the gate this waited for
                result.completeExceptionally(Waits.counted(timedOut, pool));
            } else {
                result.completeExceptionally(cause);
            }
        });
        // settled by the caller (a cancel, or a value of its own): the call's waits end, as in the
        // token form, and a function already running is not interrupted for it, only by its limit;
        // the outcome above is ignored. Settled from the call's own outcome, this ends nothing
        result.whenComplete((value, failure) -> calling.cancel(false));
        // a zero limit granted everything at once: nothing was waited for, and the executor's queue
        // is not a wait it can bound (the function never runs inside this call)
        if (!boundsFunction && !calling.isDone() && !(timeout.isZero() && grantedAtOnce.get())) {
            try {
                Waits.arm(timer, timeout);
            } catch (IllegalStateException closedMeanwhile) {
                // the call completed between the check and the arming: nothing to time
            }
        }
        return result;
    }

    /**
     * {@code close(Duration)} at its limit: every function handed to the call executor and not
     * started gives back its gate, section and reference, and its call fails with a
     * {@link PoolClosedException}, so an executor that never runs it cannot hold the close.
     */
    void abandonQueued() {
        for (AsyncRun<?> run : queued) {
            run.abandon(new PoolClosedException("callAsync(" + Keys.describe(run.entry.key) + ") in pool '"
                    + pool.name() + "': the pool closed before the call executor started its function"));
        }
    }

    /**
     * The async call. Every failure goes through the stage. A caller that completes or cancels the
     * returned future itself ends whichever wait is under way; what was granted is released.
     */
    public <T> CompletionStage<T> callAsync(
            K key, CancellationToken token, PoolFunction<? super V, ? extends T, ? extends Exception> fn) {
        return callAsync(key, token, fn, fn, null);
    }

    /**
     * {@link #callAsync(Object, CancellationToken, PoolFunction)} running {@code fn}, a wrapper of
     * the caller's function {@code told}, which is told the call's section wait (an observed call).
     * {@code granted}, if not null, is set when the function is handed to the call executor.
     */
    private <T> CompletionStage<T> callAsync(
            K key,
            CancellationToken token,
            PoolFunction<? super V, ? extends T, ? extends Exception> fn,
            Object told,
            AtomicBoolean granted) {
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
            // settled: by the function's outcome (no wait is left), a failed step, or the caller
            // (a cancel, or a value of its own, as completeOnTimeout gives): end the wait under way
            waits.cancel();
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
                holdGate(entry, waits.token(), token, fn, told, result, granted);
            }
        });
        return result;
    }

    private <T> void holdGate(
            Entry<K, V> entry,
            CancellationToken token,
            CancellationToken callerToken,
            PoolFunction<? super V, ? extends T, ? extends Exception> fn,
            Object told,
            CompletableFuture<T> result,
            AtomicBoolean granted) {
        attacher.holdGate(token, false).whenComplete((gate, failure) -> {
            if (failure != null) {
                handles.release(entry, null);
                result.completeExceptionally(unwrap(failure));
            } else if (result.isDone()) {
                gate.close();
                handles.release(entry, null);
            } else if (!sections) {
                dispatch(new AsyncRun<>(entry, gate, null, callerToken, fn, result), granted);
            } else {
                Section.enterAsync(handles, entry, token, true, told).whenComplete((section, sectionFailure) -> {
                    if (sectionFailure != null) {
                        gate.close();
                        handles.release(entry, null);
                        result.completeExceptionally(unwrap(sectionFailure));
                    } else {
                        dispatch(
                                new AsyncRun<>(entry, gate, (SectionHold<?, ?>) section, callerToken, fn, result),
                                granted);
                    }
                });
            }
        });
    }

    /** Hands {@code run} to the call executor, {@code granted} (if not null) set first. */
    private void dispatch(AsyncRun<?> run, AtomicBoolean granted) {
        if (granted != null) {
            granted.set(true);
        }
        run.dispatch();
    }

    /**
     * A {@code callAsync} whose waits are all granted: its function, handed to the call executor.
     * The handing thread is recorded while it hands over, so a task that runs inline on it is moved.
     *
     * <pre>
     *   task          to         by (one claim decides)
     *   handed over   claimed    its run on an executor thread: fn runs, then all is released
     *   handed over   claimed    its move to a thread of the pool's own (inline, rejected, attached)
     *   handed over   claimed    an abandonment: the caller's future settled, its token cancelled,
     *                            or close(Duration) at its limit; all is released, fn never runs
     * </pre>
     *
     * <p>A task handed over sits in {@code queued} until it is claimed, so a bounded close finds
     * the ones an executor never started; whatever loses the claim does nothing.
     */
    private final class AsyncRun<T> implements Runnable {
        /** The object's reference, which the call gives back when the function returns. */
        private final Entry<K, V> entry;

        private final Guard gate;
        private final SectionHold<?, ?> section;
        /** The caller's token: cancelled while the function runs, it interrupts the function. */
        private final CancellationToken token;

        private final PoolFunction<? super V, ? extends T, ? extends Exception> fn;
        private final CompletableFuture<T> result;
        /** Set by the one run of the task: see {@link #claim}. */
        private final AtomicBoolean claimed = new AtomicBoolean();
        /** The thread handing the task over, while it does. */
        private volatile Thread handing;
        /** The token's callback that abandons the task if it is cancelled before the task runs. */
        private volatile Registration cancelled;

        AsyncRun(
                Entry<K, V> entry,
                Guard gate,
                SectionHold<?, ?> section,
                CancellationToken token,
                PoolFunction<? super V, ? extends T, ? extends Exception> fn,
                CompletableFuture<T> result) {
            this.entry = entry;
            this.gate = gate;
            this.section = section;
            this.token = token;
            this.fn = fn;
            this.result = result;
        }

        void dispatch() {
            queued.add(this);
            // settled by the caller (a cancel, or a value of its own): what a task not yet run holds
            // goes back now; settled by the run itself, the task is claimed already and this does nothing
            result.whenComplete((value, failure) -> abandon(null));
            if (token.canBeCancelled()) { // so does a token cancelled before the function starts
                Registration registered = token.register(() -> abandon(cancelledBeforeStart(entry)));
                cancelled = registered;
                if (claimed.get()) { // abandoned before the registration was stored: claim() missed it
                    registered.unregister();
                }
            }
            if (claimed.get()) {
                return; // abandoned already: nothing is left to hand over
            }
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
            if (!claim()) {
                return; // the executor threw after taking the task, which already moved
            }
            if (result.isDone()) { // the caller gave up while the task was queued
                releaseAll();
                return;
            }
            AsyncCalls.this.run(entry, gate, section, token, fn, result);
        }

        /**
         * {@return whether this is the one run of the task}: an executor that takes the task and
         * then throws (an {@code Error} starting a worker) runs it as well as the thread it moved to.
         */
        private boolean claim() {
            if (claimed.get() || !claimed.compareAndSet(false, true)) {
                return false;
            }
            queued.remove(this);
            Registration registered = cancelled;
            if (registered != null) {
                registered.unregister(); // the function starts or is abandoned: the token no longer abandons it
            }
            return true;
        }

        /**
         * Gives back what the task holds if it has not run, and fails the call with {@code failure}
         * ({@code null}: the caller completed it already); the task then does nothing when it runs.
         * An executor that dropped the task (a discard policy) so holds nothing for ever.
         */
        void abandon(Throwable failure) {
            if (!claim()) {
                return; // running, or run
            }
            releaseAll();
            if (failure != null) {
                result.completeExceptionally(failure);
            }
        }

        private void moveToOwnThread() {
            Runnable own = () -> {
                if (!claim()) {
                    return;
                }
                if (result.isDone()) {
                    releaseAll();
                } else {
                    AsyncCalls.this.run(entry, gate, section, token, fn, result);
                }
            };
            try {
                OwnThreads.start("call", pool.name(), own);
            } catch (Throwable noThread) { // nothing can run the function: release all, fail the call
                if (claim()) {
                    releaseAll();
                    result.completeExceptionally(noThread);
                }
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

    /**
     * Runs {@code fn} attached through {@code gate}, then releases section, reference and gate. With
     * a {@link RunControl}: the section's hooks around it on this thread, and {@code fn} marked
     * running for the interrupter, which {@code token} cancelled calls; a token cancelled before
     * {@code fn} started fails the call instead.
     */
    private <T> void run(
            Entry<K, V> entry,
            Guard gate,
            SectionHold<?, ?> section,
            CancellationToken token,
            PoolFunction<? super V, ? extends T, ? extends Exception> fn,
            CompletableFuture<T> result) {
        T value;
        try {
            value = attacher.runAttached(gate, false, attachment -> {
                try {
                    if (section != null) {
                        section.runningOn(Thread.currentThread());
                    }
                    // the caller gave up after the waits (its token, or the stage settled): fn never starts
                    if (token.isCancellationRequested() || result.isDone()) {
                        throw cancelledBeforeStart(entry);
                    }
                    if (runs != null) {
                        return applyControlled(entry, section != null, token, fn);
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

    /** The part of {@link #run} a {@link RunControl} adds: hooks if {@code inSection}, the interrupter's mark. */
    private <T> T applyControlled(
            Entry<K, V> entry,
            boolean inSection,
            CancellationToken token,
            PoolFunction<? super V, ? extends T, ? extends Exception> fn)
            throws Exception {
        if (inSection) {
            runs.enter(entry); // a failure: the section is released by the caller, and the call fails with it
        }
        try {
            return runs.apply(entry, fn, token, null, 0L); // a token cancelled meanwhile: fn never starts
        } finally {
            if (inSection) {
                runs.leave(entry);
            }
        }
    }

    /** {@return the failure of a call whose token was cancelled after its waits, before its function started} */
    private CancellationException cancelledBeforeStart(Entry<K, V> entry) {
        return new CancellationException("callAsync(" + Keys.describe(entry.key) + ") in pool '" + pool.name()
                + "': its token was cancelled before the function started");
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
