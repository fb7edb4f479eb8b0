package io.refpool.sync;

import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one scheduler behind {@link CancellationSource#cancelAfter}: a daemon thread, started on the
 * first timer and stopped again after a second without any, so a program that never uses timers
 * never starts it. Cancelled timers leave its queue at once, so a closed source is not kept
 * reachable by a timer that will never fire.
 *
 * <p>The timer thread runs no callback: a due timer hands its cancel to the cancellers, daemon
 * threads made as needed, reused, and ended after {@value #IDLE_CANCELLER_SECONDS} seconds idle. A
 * cancel runs callbacks and the continuations of the waits it ends, which may block (a waiter let
 * through runs its function); on the timer thread, one of them would hold back every timer of the
 * JVM, the one that would end its own wait included.
 */
final class CancellationTimers {
    private static final long IDLE_THREAD_SECONDS = 1;

    private static final long IDLE_CANCELLER_SECONDS = 10;

    private static final AtomicInteger CANCELLERS_STARTED = new AtomicInteger();

    private CancellationTimers() {}

    static ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        return Scheduler.EXECUTOR.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs a due timer's {@code cancel} on a canceller thread.
     *
     * @throws RejectedExecutionException or an {@link Error} if no thread could take it; the caller
     *     then runs it itself
     */
    static void dispatch(Runnable cancel) {
        Cancellers.EXECUTOR.execute(cancel);
    }

    /** Lazy holder: the cancellers exist once a timer came due. */
    private static final class Cancellers {
        static final ThreadPoolExecutor EXECUTOR = new ThreadPoolExecutor(
                0, Integer.MAX_VALUE, IDLE_CANCELLER_SECONDS, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
                    // shared and reused: inherit no thread-locals and no context class loader of
                    // whichever thread happened to start it
                    Thread thread = new Thread(
                            null, task, "refpool-canceller-" + CANCELLERS_STARTED.incrementAndGet(), 0, false);
                    thread.setDaemon(true);
                    thread.setContextClassLoader(CancellationTimers.class.getClassLoader());
                    return thread;
                });
    }

    /** {@return whether the timer is still waiting in the scheduler's queue}; for tests */
    static boolean isQueued(Future<?> timer) {
        return Scheduler.EXECUTOR.getQueue().contains(timer);
    }

    /** Lazy holder: the executor is created by the first {@link #schedule}. */
    private static final class Scheduler {
        static final ScheduledThreadPoolExecutor EXECUTOR = newExecutor();

        private static ScheduledThreadPoolExecutor newExecutor() {
            ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
                Thread thread = new Thread(task, "refpool-cancellation-timer");
                thread.setDaemon(true);
                return thread;
            });
            executor.setRemoveOnCancelPolicy(true);
            executor.setKeepAliveTime(IDLE_THREAD_SECONDS, TimeUnit.SECONDS);
            executor.allowCoreThreadTimeOut(true);
            return executor;
        }
    }
}
