package io.refpool.core.internal;

import com.github.benmanes.caffeine.cache.Scheduler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who runs the idle cache's maintenance when a put leaves the cache over its bound, so that no put
 * waits for another thread's maintenance.
 *
 * <pre>{@code
 * CacheMaintenance maintenance = new CacheMaintenance(cache::cleanUp);
 * Caffeine.newBuilder().executor(maintenance::execute);  // the cache's own maintenance, as a runner
 * int[] put = CacheMaintenance.beginPut();
 * try {
 *     cache.asMap().putIfAbsent(key, value);
 * } finally {
 *     CacheMaintenance.endPut(put);
 * }
 * maintenance.request();  // if the put left the cache over its bound
 * }</pre>
 *
 * <p>The cache runs its maintenance under one lock, and its {@code cleanUp()} waits for that lock.
 * Two threads churning the cache both leave it over its bound (each put's own maintenance only
 * tries the lock) and would then park on it in turn, which costs more than the maintenance itself.
 * Here one thread at a time is the runner: a put's request, or the cache's maintenance task run by
 * a put that took the lock; a put that finds a runner hands its request over and returns, and the
 * runner runs one more round, which starts after that put's write.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   state      set by                                    means
 *   IDLE       the runner, by CAS from RUNNING, or      no runner
 *              after its last round (or a round threw)
 *   RUNNING    a request or the cache's task, by CAS     a runner is in a round
 *              from IDLE; the runner before a round
 *   AGAIN      a request, by CAS from RUNNING            the runner owes one more round
 *   LAST       the runner after its handoff rounds       its last round: requests run their own
 * </pre>
 *
 * <p>A request that sees {@code AGAIN} returns too: the runner has not taken that flag yet (it would
 * have moved the state on), so the round it owes starts after the request's read. Once the state
 * is other than {@code IDLE}, only the runner changes it, except the one step {@code RUNNING} to
 * {@code AGAIN}: so every handed-over request is answered by a round, and a runner stops after
 * {@code HANDOFF_ROUNDS} rounds and a last one, however long the others keep writing (in
 * {@code LAST} a request runs a round itself, and may wait for the lock, as it may in the moments
 * around a runner's start and end and while a thread that is not a runner holds the lock). Every
 * runner is a thread inside a put, so once every put has returned, a round has run after every
 * write that asked for one.
 */
final class CacheMaintenance {
    static final int IDLE = 0;
    static final int RUNNING = 1;
    static final int AGAIN = 2;
    static final int LAST = 3;

    /** The rounds one runner runs, its first included, before it lets requests run their own. */
    static final int HANDOFF_ROUNDS = 4;

    private final int handoffRounds;

    /**
     * The cache's scheduler: a delayed task leaves refpool's timer thread ({@link Timers}), for the
     * JDK's default async executor, before the cache's executor gets it. That executor runs
     * everything inline ({@link #execute}), so a scheduled maintenance would otherwise run on the
     * timer thread, and its wait for the cache's lock, or a configurer's slow removal listener, would
     * hold up every pool's delays. A delay the cache cancels (it has nothing left to expire, as after
     * the pool's close) leaves the timer's queue, and with it the last reference to the pool.
     */
    static final Scheduler SCHEDULER = (cacheExecutor, task, delay, unit) ->
            Timers.schedule(() -> Handoff.ASYNC.execute(() -> cacheExecutor.execute(task)), delay, unit);

    /** Holds the JDK's default async executor, read once, on the first schedule. */
    private static final class Handoff {
        static final Executor ASYNC = new CompletableFuture<Void>().defaultExecutor();
    }

    /** Per thread: how many puts of an idle cache it is inside (one, unless a listener puts again). */
    private static final ThreadLocal<int[]> PUTS = ThreadLocal.withInitial(() -> new int[1]);

    private final AtomicInteger state = new AtomicInteger(IDLE);
    /** One maintenance round; reports its own failures and never throws. */
    private final Runnable round;

    CacheMaintenance(Runnable round) {
        this(round, HANDOFF_ROUNDS);
    }

    CacheMaintenance(Runnable round, int handoffRounds) {
        if (handoffRounds < 1) {
            throw new IllegalArgumentException("handoffRounds must be at least 1, not " + handoffRounds);
        }
        this.round = round;
        this.handoffRounds = handoffRounds;
    }

    /** Runs a round that starts after the calling thread's writes: now, or by the runner before it returns. */
    void request() {
        for (; ; ) {
            switch (state.get()) {
                case IDLE:
                    if (state.compareAndSet(IDLE, RUNNING)) {
                        runRounds(round);
                        return;
                    }
                    break;
                case RUNNING:
                    if (state.compareAndSet(RUNNING, AGAIN)) {
                        return;
                    }
                    break;
                case AGAIN:
                    return;
                default: // LAST: the runner takes no more requests
                    round.run();
                    return;
            }
        }
    }

    /**
     * Marks the calling thread as inside a put of the cache until {@link #endPut}, the only place
     * where the cache's own task becomes the runner.
     *
     * @return the mark, to hand to {@link #endPut}
     */
    static int[] beginPut() {
        int[] puts = PUTS.get();
        puts[0]++;
        return puts;
    }

    /** Ends the mark of {@link #beginPut}. */
    static void endPut(int[] puts) {
        puts[0]--;
    }

    /**
     * The cache's executor: everything runs inline, on the calling thread. The cache's maintenance
     * task, submitted by a put that took the cache's lock, runs as the runner's first round if
     * there is none. Anything else runs as it is: a removal notice (a configurer's listener),
     * which the cache may send from inside its maintenance, where a round would re-enter it; and a
     * task the cache's scheduler delayed, on a thread of the JDK's async executor ({@link
     * #SCHEDULER}), which must not take rounds over.
     */
    void execute(Runnable task) {
        if (task instanceof ForkJoinTask
                && PUTS.get()[0] > 0
                && state.get() == IDLE
                && state.compareAndSet(IDLE, RUNNING)) {
            runRounds(task);
        } else {
            task.run();
        }
    }

    /** {@return the state, for tests} */
    int state() {
        return state.get();
    }

    /**
     * Runs {@code first}, then one round per turn of requests handed over meanwhile. A failure of
     * the cache's task is rethrown after those rounds, so no request handed over is left without
     * one.
     */
    private void runRounds(Runnable first) {
        Throwable failed = null;
        boolean settled = false;
        try {
            try {
                first.run();
            } catch (Throwable e) {
                failed = e;
            }
            for (int rounds = 1; !state.compareAndSet(RUNNING, IDLE); rounds++) { // AGAIN: a request came
                if (rounds < handoffRounds) {
                    state.set(RUNNING);
                    round.run();
                } else {
                    state.set(LAST);
                    round.run();
                    state.set(IDLE);
                    break;
                }
            }
            settled = true;
        } finally {
            if (!settled) {
                state.set(IDLE); // a round threw, which it does not: the state is this runner's to give back
            }
        }
        if (failed != null) {
            throw CacheMaintenance.<RuntimeException>rethrown(failed);
        }
    }

    /** Rethrows {@code failed} as it is, a checked one thrown through code that declares none included. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T rethrown(Throwable failed) throws T {
        throw (T) failed;
    }
}
