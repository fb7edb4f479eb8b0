package io.refpool.core.internal;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The scheduler of a periodic task every pool may have (the held-too-long check, the sweep of
 * thread leases): one daemon thread for all pools, as the drainer threads are made, which retires
 * once no pool has a task queued (the last closed, or collected) and starts again with the next.
 */
final class PeriodicThreads {
    private PeriodicThreads() {}

    /** {@return a scheduler of one daemon thread named {@code name}, retired after {@code keepAliveSeconds} idle} */
    static ScheduledThreadPoolExecutor daemon(String name, long keepAliveSeconds) {
        ScheduledThreadPoolExecutor executor =
                new ScheduledThreadPoolExecutor(1, task -> OwnThreads.daemon(task, name));
        executor.setRemoveOnCancelPolicy(true);
        executor.setKeepAliveTime(keepAliveSeconds, TimeUnit.SECONDS);
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }
}
