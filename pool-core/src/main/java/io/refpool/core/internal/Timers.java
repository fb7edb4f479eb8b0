package io.refpool.core.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The delays of every pool (the drain timer and its watch, the idle cache's expiry): one daemon
 * thread of refpool's own that only hands work on, never runs it, and retires after a minute with
 * nothing scheduled. A cancelled delay leaves its queue at once, so a closed pool's cancelled timer
 * does not keep the pool reachable until it would have fired, as a delay of the JDK's shared
 * {@code CompletableFuture.delayedExecutor} does.
 */
final class Timers {
    private static final ScheduledThreadPoolExecutor EXECUTOR = PeriodicThreads.daemon("refpool-timer", 60);

    private Timers() {}

    /**
     * {@return the delay of {@code handOff}, cancellable} It runs on the timer thread after {@code
     * delay}, so it must only pass work on to another thread, and never block.
     */
    static ScheduledFuture<?> schedule(Runnable handOff, long delay, TimeUnit unit) {
        return EXECUTOR.schedule(handOff, delay, unit);
    }
}
