package io.refpool.sync;

import io.refpool.sync.internal.QueueHooks;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link QueueHooks} that stops the first {@code times} threads reaching {@code point} (optionally
 * only {@code thread}) until the test calls {@link #proceed()}, so a test can force one
 * interleaving: wait for {@link #awaitArrival()}, act, then let the paused thread go on.
 */
final class PausingHooks implements QueueHooks {
    private static final long BOUND_SECONDS = 30;

    private final Point point;
    private final Thread thread;
    private final AtomicInteger remaining;
    private final CountDownLatch arrived;
    private final CountDownLatch proceed = new CountDownLatch(1);

    PausingHooks(Point point) {
        this(point, null, 1);
    }

    PausingHooks(Point point, Thread thread, int times) {
        this.point = point;
        this.thread = thread;
        this.remaining = new AtomicInteger(times);
        this.arrived = new CountDownLatch(times);
    }

    @Override
    public void at(Point p) {
        if (p != point || (thread != null && Thread.currentThread() != thread)) {
            return;
        }
        if (remaining.getAndDecrement() <= 0) {
            return;
        }
        arrived.countDown();
        try {
            if (!proceed.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("paused at " + point + " and never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Blocks until every expected thread reached the point. */
    void awaitArrival() throws InterruptedException {
        if (!arrived.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("no thread reached " + point);
        }
    }

    /** Lets the paused threads go on. */
    void proceed() {
        proceed.countDown();
    }
}
