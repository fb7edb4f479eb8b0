package io.refpool.core;

/**
 * Why an idle object was evicted (and disposed), as counted by {@link PoolStats#evictions}.
 *
 * <pre>{@code
 * long expired = pool.stats().evictions(EvictionCause.EXPIRED);
 * }</pre>
 */
public enum EvictionCause {
    /** The idle cache's size or weight bound. */
    SIZE,
    /** The idle cache's expiry. */
    EXPIRED,
    /** The idle cache's weak or soft references; never given today, as {@link DisposalCause#COLLECTED}. */
    COLLECTED,
    /** Room was needed for a new object under {@code maxObjects}. */
    CAPACITY
}
