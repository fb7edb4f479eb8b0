package io.refpool.core.internal;

import io.refpool.core.DisposalCause;

/**
 * The readings a meter takes of a pool, each a few striped-counter sums (idle hits and idle objects
 * add the counts of the threads that keep their own, see {@code PoolCounters}): none walks the
 * keys, as {@code stats()} does to count live and idle objects.
 *
 * <pre>{@code
 * PoolReadings readings = pool.readings();
 * long idle = readings.idleNow();
 * }</pre>
 */
public final class PoolReadings {
    private final PoolCounters counters;
    private final ReleaseQueue<?> pending;
    private final Capacity<?, ?> capacity;

    PoolReadings(PoolCounters counters, ReleaseQueue<?> pending, Capacity<?, ?> capacity) {
        this.counters = counters;
        this.pending = pending;
        this.capacity = capacity;
    }

    /** {@return objects with a reference now}, from the counters (see {@link PoolCounters#idleNow()}) */
    public long liveNow() {
        return Math.max(0, counters.existing() - counters.idleNow());
    }

    /** {@return objects at count 0 and not disposed now}, from the counters */
    public long idleNow() {
        return counters.idleNow();
    }

    /** {@return releases enqueued and not yet applied} */
    public long pendingNow() {
        return pending.volatileSize();
    }

    /** {@return acquirers in line for capacity now} */
    public long capacityWaitersNow() {
        return capacity.waiters();
    }

    /** {@return capacity permits free now, or -1 if the pool has no {@code maxObjects}} */
    public long freePermitsNow() {
        return capacity.freePermits();
    }

    /** {@return objects created so far} */
    public long creations() {
        return counters.creations.sum();
    }

    /** {@return objects disposed so far for {@code cause}} */
    public long disposals(DisposalCause cause) {
        return counters.disposals(cause);
    }

    /** {@return deferred-release batches applied so far} */
    public long drains() {
        return counters.drains.sum();
    }

    /** {@return acquires served by an idle object so far} */
    public long idleHits() {
        return counters.idleHits();
    }

    /** {@return handles found unreachable while open so far} */
    public long leaks() {
        return counters.leaks.sum();
    }

    /** {@return waits the pool ended with a {@code WaitTimeoutException} so far} */
    public long timeouts() {
        return counters.timeouts.sum();
    }

    /** {@return handles and calls reported open past the held-too-long threshold so far} */
    public long heldTooLong() {
        return counters.heldTooLong.sum();
    }
}
