/**
 * The reference-counting object pool: attach scopes, handles and the deferred-release queue.
 *
 * <p>Only {@code io.refpool.core} is exported.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // Micrometer ships no module-info
module io.refpool.core {
    requires transitive io.refpool.sync;
    requires transitive com.github.benmanes.caffeine;
    requires jdk.jfr;
    // RefPoolMetrics only: pool-core runs without Micrometer; a user of RefPoolMetrics reads it too
    requires static transitive micrometer.core;

    exports io.refpool.core;
}
