package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.Interrupter;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.core.SectionHooks;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Registration;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The pool's optional control of running code: the {@link Interrupter} of a call that ran past its
 * limit, was cancelled, or still runs at a bounded close, and the {@link SectionHooks} around a
 * section. It exists only if one of them is set; the request path of a pool without them reads one
 * {@code null} field and does nothing else.
 *
 * <pre>
 *   call's run      to             by
 *   STARTING        RUNNING        the calling thread, once the run is registered, just before the function
 *   STARTING        STOPPED        a timer, a cancelled token, or close(Duration) before that: the
 *                                  function never starts and the call fails; no interrupter
 *   RUNNING         RETURNED       the running thread, when the function returned or threw
 *   RUNNING         INTERRUPTING   a timer (on an interrupter thread, not the timer's), a
 *                                  cancelled token, or close(Duration): calls the interrupter
 *   INTERRUPTING    INTERRUPTED    the interrupter returned (or threw); the running thread, waiting
 *                                  for it once the function returned, applies its outcome
 * </pre>
 *
 * <p>One compare-and-set from {@code RUNNING} decides: the interrupter runs at most once per call,
 * only while the function runs, and never once the pool saw the function return. A registration on
 * a token already cancelled runs its callback at once, on the registering thread: the run is then
 * still {@code STARTING}, so the call fails instead of starting a function that nothing would stop. The running thread keeps the object, its
 * section and its reference until an interrupter that started has returned, so an interrupter
 * never acts on an object another call took meanwhile, and a retired object is disposed only when
 * its last holder lets go.
 */
final class RunControl<K, V> {
    private static final int STARTING = 0;
    private static final int RUNNING = 1;
    private static final int RETURNED = 2;
    private static final int INTERRUPTING = 3;
    private static final int INTERRUPTED = 4;
    private static final int STOPPED = 5;

    private final PoolState pool;
    private final LifecycleControl<K, V> control;
    /** {@code null}: no interrupter, nothing is timed or registered. */
    private final Interrupter<? super K, ? super V> interrupter;
    /** {@code null}: no hooks. */
    private final SectionHooks<? super K, ? super V> hooks;
    /** The calls running now, for a bounded close; {@code null} without an interrupter. */
    private final Set<Run> running;
    /**
     * The runs whose interrupter is running now, whatever their call does meanwhile: a call whose
     * function returned has left {@link #running} and waits for its interrupter.
     */
    private final Set<Run> interrupting;
    /**
     * Set by a bounded close at its limit, before it interrupts the runs it finds: a call whose run
     * registers after that (it was still in its waits at the limit) never starts its function.
     */
    private volatile boolean stopAll;

    RunControl(
            PoolState pool,
            LifecycleControl<K, V> control,
            Interrupter<? super K, ? super V> interrupter,
            SectionHooks<? super K, ? super V> hooks) {
        this.pool = pool;
        this.control = control;
        this.interrupter = interrupter;
        this.hooks = hooks;
        this.running = interrupter == null ? null : ConcurrentHashMap.newKeySet();
        this.interrupting = interrupter == null ? null : ConcurrentHashMap.newKeySet();
    }

    /** {@return the control for these settings, or {@code null} if neither option is set} */
    static <K, V> RunControl<K, V> of(PoolState pool, LifecycleControl<K, V> control, PoolSettings<K, V> settings) {
        if (settings.interrupter() == null && settings.sectionHooks() == null) {
            return null;
        }
        return new RunControl<>(pool, control, settings.interrupter(), settings.sectionHooks());
    }

    /** {@return whether the pool has an interrupter}: then a call's limit bounds its function too */
    boolean interrupts() {
        return interrupter != null;
    }

    // ---------------------------------------------------------------- section hooks

    /**
     * Runs the enter hook on the thread that just took the section of {@code entry}. If it throws,
     * the failure is reported and rethrown: the caller releases the section and fails.
     */
    void enter(Entry<K, V> entry) {
        if (hooks == null) {
            return;
        }
        try {
            hooks.enter(entry.key, entry.value);
        } catch (Throwable e) { // a checked exception thrown sneakily too: rethrown as it is
            report(PoolError.Kind.SECTION_HOOK_FAILED, entry, "section enter hook", "the section was left free", e);
            throw e;
        }
    }

    /** Runs the leave hook before the section of {@code entry} is released; a failure is reported only. */
    void leave(Entry<K, V> entry) {
        if (hooks == null) {
            return;
        }
        try {
            hooks.leave(entry.key, entry.value);
        } catch (Throwable e) {
            report(PoolError.Kind.SECTION_HOOK_FAILED, entry, "section leave hook", "the section was released", e);
        }
    }

    private void report(PoolError.Kind kind, Entry<K, V> entry, String what, String then, Throwable e) {
        pool.report(
                kind,
                entry.key,
                "the " + what + " of pool '" + pool.name() + "' threw for key " + Keys.describe(entry.key) + "; "
                        + then,
                e);
    }

    // ---------------------------------------------------------------- interrupter

    /**
     * Marks a function about to run on {@code entry}: interruptible by {@code token} if it can be
     * cancelled, by a timer at {@code deadlineNanos} if the call has a {@code limit}, and by a
     * bounded close. A limit already passed fails the call before its function starts: an
     * interrupter can only stop what runs, and some engines' interrupts miss a script that starts
     * after them.
     *
     * @return the run, to end with {@link #returned}; {@code null} without an interrupter
     * @throws WaitTimeoutException if {@code limit} ran out in the call's waits
     */
    Run started(Entry<K, V> entry, CancellationToken token, Duration limit, long deadlineNanos) {
        return started(entry, null, token, limit, deadlineNanos);
    }

    /**
     * {@link #started(Entry, CancellationToken, Duration, long)} of a function on two objects: an
     * interrupt gives {@code entry}'s object, then {@code other}'s, to the interrupter, and applies
     * each one's outcome. {@code other} is {@code null} for a function on one object.
     */
    Run started(Entry<K, V> entry, Entry<K, V> other, CancellationToken token, Duration limit, long deadlineNanos) {
        if (interrupter == null) {
            return null;
        }
        long left = limit == null ? 0 : deadlineNanos - System.nanoTime();
        if (limit != null && left <= 0) {
            throw Waits.counted(
                    new WaitTimeoutException(
                            "the start of the function on key " + Keys.describe(entry.key) + " of pool '" + pool.name()
                                    + "' (the call's waits used its limit)",
                            limit),
                    pool);
        }
        Run run = new Run(entry, other);
        running.add(run);
        if (limit != null) {
            CancellationSource timer = new CancellationSource();
            run.timer = timer;
            timer.token().register(run::limitPassed);
            timer.cancelAfter(Duration.ofNanos(left));
        }
        if (token.canBeCancelled()) {
            run.registration = token.register(run);
        }
        if (stopAll) { // the bounded close reached its limit while this call waited
            run.run();
        }
        pool.hook(PoolHooks.Point.FUNCTION_STARTING);
        if (!run.state.compareAndSet(STARTING, RUNNING)) { // stopped in the meantime: fn never starts
            end(run);
            throw stoppedBeforeStart(run, entry, token, limit);
        }
        return run;
    }

    /**
     * {@return the failure of a call whose run was stopped before its function started}: its limit,
     * its token, or the pool's bounded close, in that order of what is checked
     */
    private RuntimeException stoppedBeforeStart(Run run, Entry<K, V> entry, CancellationToken token, Duration limit) {
        String start =
                "the start of the function on key " + Keys.describe(entry.key) + " of pool '" + pool.name() + "'";
        if (run.timer != null && run.timer.token().isCancellationRequested()) {
            return Waits.counted(new WaitTimeoutException(start + " (the call's limit ran out first)", limit), pool);
        }
        if (token.isCancellationRequested()) {
            return new CancellationException(start + ": the call's token was cancelled before the function started");
        }
        return new PoolClosedException(start + ": the pool's bounded close reached its limit first");
    }

    /** Takes {@code run} off the timer, the token and the running set. */
    private void end(Run run) {
        if (run.timer != null) {
            run.timer.close();
        }
        if (run.registration != null) {
            run.registration.unregister();
        }
        running.remove(run);
    }

    /**
     * Runs {@code fn} on the object of {@code entry}, marked running for the interrupter as {@link
     * #started(Entry, CancellationToken, Duration, long)} says, then settles the interrupter with
     * {@link #returned}: the one way a call's function runs under this control.
     */
    <T, E extends Exception> T apply(
            Entry<K, V> entry,
            PoolFunction<? super V, ? extends T, E> fn,
            CancellationToken token,
            Duration limit,
            long deadlineNanos)
            throws E {
        Run run = started(entry, token, limit, deadlineNanos);
        try {
            return fn.apply(entry.value);
        } finally {
            returned(run);
        }
    }

    /**
     * The function of {@code run} returned or threw, on the running thread, which holds the object
     * (attached, where {@code entry} can be retired): from now on the interrupter is not called;
     * one that started is waited for, and its outcome applied.
     */
    void returned(Run run) {
        if (run == null) {
            return;
        }
        boolean interrupted = !run.state.compareAndSet(RUNNING, RETURNED);
        pool.hook(PoolHooks.Point.FUNCTION_RETURNED);
        end(run);
        if (!interrupted) {
            return;
        }
        if (run.awaitOutcome() == Interrupter.Outcome.RETIRE) {
            retire(run.entry);
        }
        if (run.other != null && run.otherOutcome == Interrupter.Outcome.RETIRE) {
            retire(run.other);
        }
    }

    /**
     * Retires an object its interrupter asked to retire. A failure (the key's {@code hashCode} threw
     * while the retired object left its slot) is reported: the call's own outcome stands.
     */
    private void retire(Entry<K, V> entry) {
        try {
            control.retireHeld(entry, DisposalCause.INTERRUPTED);
        } catch (Throwable keyFailed) {
            pool.report(
                    PoolError.Kind.INTERRUPTER_FAILED,
                    entry.key,
                    "the interrupter retired the object of key " + Keys.describe(entry.key)
                            + ", whose key then failed: " + Keys.describeFailure(keyFailed),
                    keyFailed);
        }
    }

    /**
     * Arms {@code timeout} to cancel {@code timer}, the token of a {@code callAsync} whose limit
     * bounds its function: the cancel runs the interrupter of a running function, so it is handed
     * to an interrupter thread, as {@code Run.limitPassed} hands a synchronous call's. A zero limit cancels here, before the call starts (nothing is
     * registered on the timer yet, so no interrupter runs on this thread), so the call fails
     * without running its function whenever the interrupter threads run.
     *
     * @return the limit's own source, to close when the call completes, or {@code null}
     */
    static CancellationSource armLimit(CancellationSource timer, Duration timeout) {
        if (timeout.isZero()) {
            timer.cancel();
            return null;
        }
        CancellationSource limit = new CancellationSource();
        limit.token().register(() -> {
            try {
                OwnThreads.interrupt(timer::cancel);
            } catch (Throwable noThread) {
                timer.cancel();
            }
        });
        limit.cancelAfter(timeout);
        return limit;
    }

    /**
     * {@return whether the calling thread is running this pool's interrupter}: a close waits for
     * the interrupted call, which waits for its interrupter, so this thread must never wait for a
     * close (an interrupter's {@code flush()} or {@code close()} on a closing pool returns at once)
     */
    boolean interruptsOnThisThread() {
        if (interrupter == null) {
            return false;
        }
        Thread me = Thread.currentThread();
        for (Run run : interrupting) {
            if (run.interruptedBy == me) {
                return true;
            }
        }
        return false;
    }

    /** {@code close(Duration)} at its limit: interrupts every call still running. */
    void interruptAll() {
        if (interrupter == null) {
            return;
        }
        stopAll = true; // before the scan: a run registered after it sees the flag, one before it is found
        for (Run run : running) {
            run.run();
        }
    }

    /** One call's function, running; its {@code run()} interrupts it (a timer's, a token's or a close's callback). */
    final class Run implements Runnable {
        final Entry<K, V> entry;
        /** The second object of a two-key call, or {@code null}. */
        final Entry<K, V> other;

        final AtomicInteger state = new AtomicInteger(STARTING);
        CancellationSource timer;
        Registration registration;
        /** Written before {@code state} becomes {@code INTERRUPTED}, read after it is seen. */
        private Interrupter.Outcome outcome;
        /** {@code other}'s outcome, written with {@code outcome}. */
        private Interrupter.Outcome otherOutcome;
        /**
         * The calling thread once it waits in {@link #awaitOutcome}: written before it reads {@code
         * state}, read by the interrupting thread after it set {@code INTERRUPTED}, so one of the two
         * sees the other's write and the waiter is never left parked.
         */
        private volatile Thread waiter;

        /** The thread running the interrupter, while it runs ({@link #interruptsOnThisThread}). */
        volatile Thread interruptedBy;

        Run(Entry<K, V> entry, Entry<K, V> other) {
            this.entry = entry;
            this.other = other;
        }

        /**
         * The call's limit passed, on the thread {@code cancelAfter} cancels on (never the JVM's
         * one timer thread): a function not yet started is stopped here, and one running is
         * interrupted on an interrupter thread ({@link OwnThreads#interrupt}), the thread a
         * close and an interrupter's own calls know as one. If no thread can be had, it runs here.
         */
        void limitPassed() {
            if (state.compareAndSet(STARTING, STOPPED) || state.get() != RUNNING) {
                return;
            }
            try {
                OwnThreads.interrupt(this);
            } catch (Throwable noThread) {
                run();
            }
        }

        @Override
        public void run() {
            if (state.compareAndSet(STARTING, STOPPED)) {
                return; // the function has not started: the calling thread fails the call instead
            }
            if (!state.compareAndSet(RUNNING, INTERRUPTING)) {
                return;
            }
            interruptedBy = Thread.currentThread();
            interrupting.add(this);
            Interrupter.Outcome result = Interrupter.Outcome.RETIRE; // if anything below throws
            Interrupter.Outcome second = other == null ? null : Interrupter.Outcome.RETIRE;
            try {
                result = interrupt(entry);
                second = other == null ? null : interrupt(other);
            } finally {
                interrupting.remove(this);
                interruptedBy = null;
                // whatever happened, the call waiting in awaitOutcome learns an outcome and goes on
                outcome = result;
                otherOutcome = second;
                state.set(INTERRUPTED);
                Thread waiting = waiter;
                if (waiting != null) {
                    LockSupport.unpark(waiting);
                }
            }
        }

        /** {@return the interrupter's outcome for {@code target}}, {@code RETIRE} if it threw */
        private Interrupter.Outcome interrupt(Entry<K, V> target) {
            try {
                Interrupter.Outcome result = interrupter.interrupt(target.key, target.value);
                if (result == null) {
                    throw new NullPointerException("the interrupter returned null instead of KEEP or RETIRE");
                }
                return result;
            } catch (Throwable e) {
                Waits.keepInterrupt(e);
                report(PoolError.Kind.INTERRUPTER_FAILED, target, "interrupter", "the object is retired", e);
                return Interrupter.Outcome.RETIRE;
            }
        }

        /**
         * Waits, uninterruptibly, for the interrupter under way to return. It parks rather than
         * waits on a monitor, so a virtual thread waiting here gives its carrier up on every JDK
         * (before JDK 24 a monitor wait pins it, and the interrupter may need that carrier).
         */
        Interrupter.Outcome awaitOutcome() {
            waiter = Thread.currentThread();
            boolean interrupted = false;
            while (state.get() != INTERRUPTED) {
                LockSupport.park(this);
                if (Thread.interrupted()) { // park returns at once while the flag is set: keep it for later
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return outcome;
        }
    }
}
