package io.refpool.core.internal;

/**
 * Whether the test seams ({@link PoolHooks}, {@link ReleaseQueueHooks}) may be installed: read once,
 * from the system property {@code io.refpool.testHooks}, which the build sets for tests. A
 * {@code static final} the JIT folds, so with the seams off every {@code if (TestSeams.ON && ...)}
 * at a hook point is compiled away, and the point costs nothing, not even the volatile read of the
 * installed hook.
 */
final class TestSeams {
    static final boolean ON = Boolean.getBoolean("io.refpool.testHooks");

    private TestSeams() {}

    /** Refuses to install a seam that would never be called: the property is not set. */
    static void checkInstallable(Object hooks) {
        if (hooks != null && !ON) {
            throw new IllegalStateException(
                    "test hooks are off in this JVM: run it with -Dio.refpool.testHooks=true to install them");
        }
    }
}
