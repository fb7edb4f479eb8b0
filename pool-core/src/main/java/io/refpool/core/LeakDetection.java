package io.refpool.core;

/**
 * How a pool watches for handles that become unreachable without being closed.
 *
 * <pre>{@code
 * RefPool<String, Session> pool = RefPool.builder((String tenant) -> engine.open(tenant))
 *         .leakDetection(LeakDetection.PARANOID)   // every handle tracked, with its site
 *         .build();
 * }</pre>
 *
 * <p>A tracked handle that is garbage collected while open is released through the deferred queue
 * (so its object is still released attached) and reported to the pool's error listener with the
 * stack trace of its acquisition.
 */
public enum LeakDetection {
    /**
     * No tracking: a handle that is never closed keeps its object alive for ever, also after the
     * pool closed ({@code close()} disposes objects only as their last handles close, and reports
     * the handles still open as {@link PoolError.Kind#HANDLES_OPEN_AT_CLOSE}).
     */
    OFF,
    /** A sample of handles is tracked, with their acquisition sites; cheap enough for production. */
    SAMPLED,
    /** Every handle is tracked with its acquisition site, and double closes report the first close. */
    PARANOID
}
