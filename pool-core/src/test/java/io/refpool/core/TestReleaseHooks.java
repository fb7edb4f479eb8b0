package io.refpool.core;

import io.refpool.core.internal.ReleaseQueueHooks;
import io.refpool.testkit.TestKit;
import java.util.EnumMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link ReleaseQueueHooks} for the release-queue tests: it counts every passage of every point,
 * and can stop the first {@code times} passages of one point (optionally only by one thread) until
 * the test calls {@link #proceed()}, so a test can force one interleaving: wait for
 * {@link #awaitArrival()}, act, then let the paused thread go on.
 */
final class TestReleaseHooks implements ReleaseQueueHooks {
    private final EnumMap<Point, LongAdder> counts = new EnumMap<>(Point.class);
    private final Point pausePoint;
    private final Thread pauseThread;
    private final AtomicInteger remaining;
    private final CountDownLatch arrived;
    private final CountDownLatch proceed = new CountDownLatch(1);

    private TestReleaseHooks(Point pausePoint, Thread pauseThread, int times) {
        for (Point point : Point.values()) {
            counts.put(point, new LongAdder());
        }
        this.pausePoint = pausePoint;
        this.pauseThread = pauseThread;
        this.remaining = new AtomicInteger(times);
        this.arrived = new CountDownLatch(times);
    }

    /** {@return hooks that only count} */
    static TestReleaseHooks counting() {
        return new TestReleaseHooks(null, null, 0);
    }

    /** {@return hooks that pause the first passage of {@code point} by {@code thread}} */
    static TestReleaseHooks pausing(Point point, Thread thread) {
        return new TestReleaseHooks(point, thread, 1);
    }

    @Override
    public void at(Point point) {
        counts.get(point).increment();
        if (point != pausePoint || (pauseThread != null && Thread.currentThread() != pauseThread)) {
            return;
        }
        if (remaining.getAndDecrement() <= 0) {
            return;
        }
        arrived.countDown();
        try {
            if (!proceed.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("paused at " + point + " and never let go");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return how many times a thread passed {@code point}} */
    long count(Point point) {
        return counts.get(point).sum();
    }

    /** Blocks until the paused thread reached the point. */
    void awaitArrival() throws InterruptedException {
        if (!arrived.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS)) {
            throw new AssertionError("no thread reached " + pausePoint);
        }
    }

    /** Lets the paused thread go on. */
    void proceed() {
        proceed.countDown();
    }
}
