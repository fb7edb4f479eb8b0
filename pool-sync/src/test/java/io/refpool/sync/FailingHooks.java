package io.refpool.sync;

import io.refpool.sync.internal.QueueHooks;

/** A {@link QueueHooks} that throws {@code failure} every time a thread reaches {@code point}. */
final class FailingHooks implements QueueHooks {
    private final Point point;
    private final RuntimeException failure;

    FailingHooks(Point point, RuntimeException failure) {
        this.point = point;
        this.failure = failure;
    }

    @Override
    public void at(Point p) {
        if (p == point) {
            throw failure;
        }
    }
}
