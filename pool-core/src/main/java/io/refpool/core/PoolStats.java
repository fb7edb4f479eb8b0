package io.refpool.core;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of a pool's counters, from {@link RefPool#stats()}.
 *
 * <pre>{@code
 * PoolStats stats = pool.stats();
 * System.out.printf("%d live, %d idle, %d pending, %d leaks%n",
 *         stats.live(), stats.idle(), stats.pendingDecrements(), stats.leaks());
 * }</pre>
 *
 * <p>Counters are read one after another while the pool runs, so a snapshot is not atomic; each
 * value was true at some moment during the call.
 */
public final class PoolStats {
    private final long live;
    private final long idle;
    private final long pendingDecrements;
    private final long drains;
    private final long creations;
    private final long disposals;
    private final Map<EvictionCause, Long> evictions;
    private final long idleHits;
    private final long capacityWaiters;
    private final long leaks;

    /**
     * Creates a snapshot; pools create these, users read them.
     *
     * @param live objects with open handles
     * @param idle objects in the idle cache
     * @param pendingDecrements releases waiting in the deferred queue
     * @param drains deferred-queue batches applied
     * @param creations objects created by the factory
     * @param disposals objects disposed
     * @param evictions idle objects evicted, by cause
     * @param idleHits acquires served from the idle cache
     * @param capacityWaiters acquires waiting for capacity
     * @param leaks handles found unreachable while open
     */
    public PoolStats(
            long live,
            long idle,
            long pendingDecrements,
            long drains,
            long creations,
            long disposals,
            Map<EvictionCause, Long> evictions,
            long idleHits,
            long capacityWaiters,
            long leaks) {
        this.live = live;
        this.idle = idle;
        this.pendingDecrements = pendingDecrements;
        this.drains = drains;
        this.creations = creations;
        this.disposals = disposals;
        EnumMap<EvictionCause, Long> copy = new EnumMap<>(EvictionCause.class);
        for (EvictionCause cause : EvictionCause.values()) {
            copy.put(cause, evictions.getOrDefault(cause, 0L));
        }
        this.evictions = copy;
        this.idleHits = idleHits;
        this.capacityWaiters = capacityWaiters;
        this.leaks = leaks;
    }

    /** {@return objects with at least one open handle (or a pending decrement)} */
    public long live() {
        return live;
    }

    /**
     * {@return objects at count zero and not disposed: idle in the cache, or evicted from it and
     * waiting for their disposal to be applied}
     */
    public long idle() {
        return idle;
    }

    /**
     * {@return releases enqueued and not yet applied: decrements of handles closed off-attachment,
     * and disposals of evicted idle objects}
     */
    public long pendingDecrements() {
        return pendingDecrements;
    }

    /** {@return deferred-queue batches applied so far} */
    public long drains() {
        return drains;
    }

    /** {@return objects the factory created} */
    public long creations() {
        return creations;
    }

    /** {@return objects disposed} */
    public long disposals() {
        return disposals;
    }

    /**
     * {@return idle objects evicted for {@code cause}}
     *
     * @param cause the cause
     */
    public long evictions(EvictionCause cause) {
        return evictions.get(Objects.requireNonNull(cause, "cause"));
    }

    /** {@return idle objects evicted, all causes} */
    public long evictions() {
        long sum = 0;
        for (long n : evictions.values()) {
            sum += n;
        }
        return sum;
    }

    /** {@return acquires served by an idle object instead of the factory} */
    public long idleHits() {
        return idleHits;
    }

    /** {@return acquires waiting for capacity right now} */
    public long capacityWaiters() {
        return capacityWaiters;
    }

    /** {@return handles found unreachable while open} */
    public long leaks() {
        return leaks;
    }

    @Override
    public String toString() {
        return "PoolStats[live=" + live + ", idle=" + idle + ", pendingDecrements=" + pendingDecrements + ", drains="
                + drains + ", creations=" + creations + ", disposals=" + disposals + ", evictions=" + evictions
                + ", idleHits=" + idleHits + ", capacityWaiters=" + capacityWaiters + ", leaks=" + leaks + "]";
    }
}
