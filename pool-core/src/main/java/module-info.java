/**
 * The reference-counting object pool: attach scopes, handles and the deferred-release queue.
 *
 * <p>Only {@code io.refpool.core} is exported.
 */
module io.refpool.core {
    requires transitive io.refpool.sync;
    requires transitive com.github.benmanes.caffeine;
    requires jdk.jfr;

    exports io.refpool.core;
}
