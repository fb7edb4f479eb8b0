/**
 * The reference-counting object pool: attach scopes, handles and the deferred-release queue.
 *
 * <p>Only {@code io.refpool.core} is exported.
 */
@SuppressWarnings("requires-automatic") // Micrometer ships no module-info
module io.refpool.core {
    requires transitive io.refpool.sync;
    requires transitive com.github.benmanes.caffeine;
    requires jdk.jfr;
    // RefPoolMetrics only: pool-core compiles and runs without Micrometer, and so does a module that
    // requires this one. Not transitive: a static transitive requirement is a requirement of every
    // module that reads this one, so each would fail to compile without Micrometer. A module that
    // uses RefPoolMetrics requires micrometer.core itself.
    requires static micrometer.core;

    exports io.refpool.core;
}
