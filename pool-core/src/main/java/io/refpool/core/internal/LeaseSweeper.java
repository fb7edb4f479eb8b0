package io.refpool.core.internal;

import java.lang.ref.WeakReference;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The sweeps of every pool with leases: one daemon thread, started by the first such pool, that
 * retires once no pool has a sweep queued. A pool collected without a close stops its own.
 */
final class LeaseSweeper implements Runnable {
    private static final ScheduledThreadPoolExecutor EXECUTOR = PeriodicThreads.daemon("refpool-lease-sweeper", 10);

    private final WeakReference<Leases<?, ?>> leases;
    private volatile ScheduledFuture<?> self;

    private LeaseSweeper(Leases<?, ?> leases) {
        this.leases = new WeakReference<>(leases);
    }

    static ScheduledFuture<?> schedule(Leases<?, ?> leases, long periodNanos) {
        LeaseSweeper sweeper = new LeaseSweeper(leases);
        ScheduledFuture<?> future =
                EXECUTOR.scheduleWithFixedDelay(sweeper, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
        sweeper.self = future;
        return future;
    }

    @Override
    public void run() {
        Leases<?, ?> live = leases.get();
        if (live == null) {
            ScheduledFuture<?> future = self;
            if (future != null) {
                future.cancel(false);
            }
            return;
        }
        try {
            live.sweep(null);
        } catch (Throwable t) { // a periodic task that throws is never run again: report, go on
            try {
                live.sweepFailed(t);
            } catch (Throwable ignored) {
                // the listener failed too: nothing else to tell
            }
        }
    }
}
