package io.refpool.core;

import io.refpool.core.internal.ReleaseQueueHooks;
import io.refpool.testkit.PointPauses;

/**
 * The release queue's seam ({@link ReleaseQueueHooks}) on the test kit's {@link PointPauses}, with at
 * most one pause, which the hooks themselves await and let go.
 */
final class TestReleaseHooks extends PointPauses<ReleaseQueueHooks.Point> implements ReleaseQueueHooks {
    private final Pause pause;

    private TestReleaseHooks(Point point, Thread thread) {
        super(Point.class);
        this.pause = point == null ? null : pause(point, thread);
    }

    /** {@return hooks that only count} */
    static TestReleaseHooks counting() {
        return new TestReleaseHooks(null, null);
    }

    /** {@return hooks that pause the first passage of {@code point} by {@code thread}} */
    static TestReleaseHooks pausing(Point point, Thread thread) {
        return new TestReleaseHooks(point, thread);
    }

    /** Blocks until the paused thread reached the point. */
    void awaitArrival() throws InterruptedException {
        pause.awaitArrival();
    }

    /** Lets the paused thread go on. */
    void proceed() {
        pause.proceed();
    }
}
