package io.refpool.core;

import io.refpool.core.internal.PoolHooks;
import io.refpool.testkit.PointPauses;

/** The pool's seam ({@link PoolHooks}) on the test kit's {@link PointPauses}. */
final class TestPoolHooks extends PointPauses<PoolHooks.Point> implements PoolHooks {
    TestPoolHooks() {
        super(PoolHooks.Point.class);
    }
}
