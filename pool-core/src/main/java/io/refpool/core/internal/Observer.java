package io.refpool.core.internal;

import io.refpool.core.PoolBiFunction;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.core.internal.PoolTimings.Timing;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a pool watches of its handles and calls when timings or the held-too-long threshold are on:
 * a {@link Hold} per open handle or running call. A pool with both off has no observer, and its
 * request path reads no clock and allocates nothing for it.
 *
 * <p>Held too long: open holds sit in a set; one periodic check per pool, on a shared daemon
 * scheduler thread, reports each hold open past the threshold once (error listener, JFR event,
 * counter). The check holds the observer weakly and is cancelled when the pool closes, so neither a
 * closed nor a forgotten pool keeps a timer.
 */
final class Observer {
    /** The longest time between two checks, whatever the threshold. */
    private static final long MAX_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final PoolState pool;
    private final PoolCounters counters;
    /** Where durations go, or {@code null}: timings off. */
    final PoolTimings timings;
    /** The held-too-long threshold, or 0: off. */
    private final long thresholdNanos;
    /** Holds open now, or {@code null} with the threshold off. */
    private final Set<Hold> open;

    /** The periodic check once started, or {@code null}: the threshold is off, or not started yet. */
    private volatile ScheduledFuture<?> check;

    private Observer(PoolState pool, PoolCounters counters, boolean timings, Duration heldTooLong) {
        this.pool = pool;
        this.counters = counters;
        this.timings = timings ? new PoolTimings() : null;
        this.thresholdNanos = heldTooLong == null ? 0 : saturatedNanos(heldTooLong);
        this.open = heldTooLong == null ? null : ConcurrentHashMap.newKeySet();
    }

    /** Starts the periodic check, if the threshold is on, once the pool is built. */
    void startChecks() {
        if (open != null) {
            check = Checker.schedule(this, thresholdNanos);
        }
    }

    /** {@return an observer, or {@code null} if timings and the threshold are both off} */
    static Observer of(PoolState pool, PoolCounters counters, boolean timings, Duration heldTooLong) {
        return timings || heldTooLong != null ? new Observer(pool, counters, timings, heldTooLong) : null;
    }

    private static long saturatedNanos(Duration duration) {
        try {
            return Math.max(1, duration.toNanos());
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** {@return a hold of {@code key}'s object, from now}; {@code what} names it in reports ("a handle") */
    Hold open(Object key, String what) {
        Hold hold = new Hold(
                key,
                what,
                System.nanoTime(),
                open == null ? null : new Throwable(what + " for key " + Keys.describe(key) + " was acquired here"));
        if (open != null) {
            open.add(hold);
        }
        return hold;
    }

    /** The hold ended: no longer watched; its use timed. Never throws. */
    void closed(Hold hold) {
        if (open != null) {
            open.remove(hold);
        }
        if (timings != null) {
            timings.since(Timing.USE, hold.start);
        }
    }

    /**
     * The handle of {@code hold} leaked and the leak detector released its reference: no longer
     * watched (it does not exist any more), and no use is timed for it. Never throws.
     */
    void leaked(Hold hold) {
        forget(hold);
    }

    /** {@code hold} is no longer watched, and no use is timed for it. Never throws. */
    void forget(Hold hold) {
        if (open != null) {
            open.remove(hold);
        }
    }

    /**
     * {@return {@code acquired}, the wait for its object recorded from {@code begun} when it
     * completes} The caller's stage stays the pool's, so its cancel still ends the wait.
     */
    <H> CompletionStage<H> objectWaited(long begun, CompletionStage<H> acquired) {
        acquired.whenComplete((handle, failure) -> {
            if (failure == null) {
                since(Timing.OBJECT_WAIT, begun);
            }
        });
        return acquired;
    }

    /** Records the time since {@code startNanos}, if timings are on. */
    void since(Timing timing, long startNanos) {
        if (timings != null) {
            timings.since(timing, startNanos);
        }
    }

    /**
     * {@return {@code fn} as a call: timed from now until it starts, held while it runs}
     *
     * @param key the call's key
     */
    <V, T, E extends Exception> PoolFunction<V, T, E> call(Object key, PoolFunction<? super V, ? extends T, E> fn) {
        return new Call<>(this, key, fn, timings == null ? 0 : System.nanoTime());
    }

    /**
     * {@return {@code fn} as a call on the objects of two keys: timed from now until it starts,
     * held while it runs} Its hold is reported under {@code first}, naming {@code second}.
     */
    <V, T, E extends Exception> PoolBiFunction<V, T, E> call(
            Object first, Object second, PoolBiFunction<? super V, ? extends T, E> fn) {
        return new BiCall<>(this, first, second, fn, timings == null ? 0 : System.nanoTime());
    }

    /**
     * Reports each hold open at {@code nowNanos} past the threshold and not reported yet.
     *
     * @return how many it reported
     */
    int check(long nowNanos) {
        if (open == null) {
            return 0;
        }
        int reported = 0;
        for (Hold hold : open) {
            long held = nowNanos - hold.start;
            if (held >= thresholdNanos && hold.reported.compareAndSet(false, true)) {
                reported++;
                try {
                    heldTooLong(hold, held);
                } catch (Throwable failed) { // the check runs on: one report's failure is not the next's
                    // report() already falls back to logging when the listener throws
                }
            }
        }
        return reported;
    }

    private void heldTooLong(Hold hold, long heldNanos) {
        counters.heldTooLong.increment();
        PoolEvents.HeldTooLong event = new PoolEvents.HeldTooLong();
        if (event.isEnabled()) {
            event.pool = pool.name();
            event.key = Keys.text(hold.key);
            event.held = heldNanos;
            event.site = LeakTracker.describe(hold.site);
            event.commit();
        }
        pool.report(
                PoolError.Kind.HELD_TOO_LONG,
                hold.key,
                hold.what + " for key " + Keys.describe(hold.key) + " of pool '" + pool.name() + "' has been open for "
                        + TimeUnit.NANOSECONDS.toMillis(heldNanos) + " ms, past the heldTooLong threshold of "
                        + TimeUnit.NANOSECONDS.toMillis(thresholdNanos)
                        + " ms; it is reported once (the cause shows where it was acquired)",
                hold.site);
    }

    /** The pool closed: the periodic check ends. Holds still open are no longer watched. */
    void poolClosed() {
        ScheduledFuture<?> started = check;
        if (started != null) {
            started.cancel(false);
        }
    }

    /**
     * {@return whether the calling thread runs the periodic check}: a listener told of a hold there
     * that closes the pool must not wait for that hold, nor keep every other pool's check waiting
     */
    static boolean checksOnThisThread() {
        return Checker.thread == Thread.currentThread();
    }

    /** {@return whether this pool's periodic check is still in the scheduler's queue}; for tests */
    boolean checkQueued() {
        ScheduledFuture<?> started = check;
        return started != null && Checker.EXECUTOR.getQueue().contains(started);
    }

    /** {@return how many pools' checks the scheduler holds}; for tests */
    static int checksQueued() {
        return Checker.EXECUTOR.getQueue().size();
    }

    /** One open handle or running call. */
    static final class Hold {
        final Object key;
        final String what;
        final long start;
        /** Where it was acquired, or {@code null} with the threshold off. */
        final Throwable site;

        final AtomicBoolean reported = new AtomicBoolean();

        Hold(Object key, String what, long start, Throwable site) {
            this.key = key;
            this.what = what;
            this.start = start;
            this.site = site;
        }
    }

    /** A call, observed: the wait until its function starts, which its section waits are not part of. */
    abstract static class Observed {
        final Observer observer;
        /** When the call began (timings on), or 0. */
        private final long begun;
        /** How long the call waited for its sections, set before the function starts. */
        private long sectionWait;

        Observed(Observer observer, long begun) {
            this.observer = observer;
            this.begun = begun;
        }

        /** The call waited {@code nanos} for a section, which is not part of the wait for its objects. */
        final void sectionWaited(long nanos) {
            sectionWait += nanos;
        }

        /** The function starts now: the wait for the objects is recorded, if timings are on. */
        final void starts() {
            if (observer.timings != null) {
                observer.timings.record(Timing.OBJECT_WAIT, System.nanoTime() - begun - sectionWait);
            }
        }
    }

    /** A call's function, observed: the wait until it starts, and the hold while it runs. */
    static final class Call<V, T, E extends Exception> extends Observed implements PoolFunction<V, T, E> {
        private final Object key;
        private final PoolFunction<? super V, ? extends T, E> fn;

        Call(Observer observer, Object key, PoolFunction<? super V, ? extends T, E> fn, long begun) {
            super(observer, begun);
            this.key = key;
            this.fn = fn;
        }

        @Override
        public T apply(V value) throws E {
            starts();
            Hold hold = observer.open(key, "a call");
            try {
                return fn.apply(value);
            } finally {
                observer.closed(hold);
            }
        }
    }

    /** The function of a call on two keys' objects, observed as a {@link Call} is: one hold for both. */
    static final class BiCall<V, T, E extends Exception> extends Observed implements PoolBiFunction<V, T, E> {
        private final Object first;
        private final Object second;
        private final PoolBiFunction<? super V, ? extends T, E> fn;

        BiCall(
                Observer observer,
                Object first,
                Object second,
                PoolBiFunction<? super V, ? extends T, E> fn,
                long begun) {
            super(observer, begun);
            this.first = first;
            this.second = second;
            this.fn = fn;
        }

        @Override
        public T apply(V a, V b) throws E {
            starts();
            Hold hold = observer.open(first, "a two-key call (the other key " + Keys.describe(second) + ")");
            try {
                return fn.apply(a, b);
            } finally {
                observer.closed(hold);
            }
        }
    }

    /** How long the checker thread stays with no check queued before it ends. */
    private static final long CHECKER_KEEP_ALIVE_SECONDS = 60;

    /**
     * The shared scheduler of the periodic checks: one daemon thread, started by the first pool with a
     * threshold, ended a minute after the last check left the queue.
     */
    private static final class Checker implements Runnable {
        static final ScheduledThreadPoolExecutor EXECUTOR = newExecutor();

        /** The thread the checks run on: one at a time, a new one after the last retired. */
        static volatile Thread thread;

        private final WeakReference<Observer> observer;
        private volatile ScheduledFuture<?> self;

        private Checker(Observer observer) {
            this.observer = new WeakReference<>(observer);
        }

        static ScheduledFuture<?> schedule(Observer observer, long thresholdNanos) {
            long period = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(thresholdNanos / 4, MAX_PERIOD_NANOS));
            Checker checker = new Checker(observer);
            ScheduledFuture<?> future = EXECUTOR.scheduleWithFixedDelay(checker, period, period, TimeUnit.NANOSECONDS);
            checker.self = future;
            return future;
        }

        @Override
        public void run() {
            thread = Thread.currentThread();
            try {
                checkOnce();
            } catch (Throwable t) { // a periodic task that throws is never run again
                // nothing to report it to: the pool may be gone
            }
        }

        private void checkOnce() {
            Observer o = observer.get();
            if (o == null) { // the pool was collected without a close
                ScheduledFuture<?> future = self;
                if (future != null) {
                    future.cancel(false);
                }
                return;
            }
            o.check(System.nanoTime());
        }

        private static ScheduledThreadPoolExecutor newExecutor() {
            return PeriodicThreads.daemon("refpool-held-check", CHECKER_KEEP_ALIVE_SECONDS);
        }
    }
}
