package io.refpool.sync;

import io.refpool.sync.internal.QueueHooks;
import io.refpool.testkit.PointPauses;

/**
 * The waiter queue's seam ({@link QueueHooks}) on the test kit's {@link PointPauses}, with one pause:
 * the first {@code times} threads reaching {@code point} (optionally only {@code thread}) stop until
 * the test calls {@link #proceed()}, so a test can force one interleaving: wait for
 * {@link #awaitArrival()}, act, then let the paused threads go on.
 */
final class PausingHooks extends PointPauses<QueueHooks.Point> implements QueueHooks {
    private final Pause pause;

    PausingHooks(Point point) {
        this(point, null, 1);
    }

    PausingHooks(Point point, Thread thread, int times) {
        super(Point.class);
        this.pause = pause(point, thread, times);
    }

    /** Blocks until every expected thread reached the point. */
    void awaitArrival() throws InterruptedException {
        pause.awaitArrival();
    }

    /** Lets the paused threads go on. */
    void proceed() {
        pause.proceed();
    }
}
