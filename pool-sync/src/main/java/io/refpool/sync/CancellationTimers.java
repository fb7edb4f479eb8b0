package io.refpool.sync;

import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one scheduler behind {@link CancellationSource#cancelAfter}: a daemon thread, started on the
 * first timer and stopped again after a second without any, so a program that never uses timers
 * never starts it. Cancelled timers leave its queue at once, so a closed source is not kept
 * reachable by a timer that will never fire.
 */
final class CancellationTimers {
    private static final long IDLE_THREAD_SECONDS = 1;

    private CancellationTimers() {}

    static ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        return Scheduler.EXECUTOR.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
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
