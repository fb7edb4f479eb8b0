package io.refpool.core;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * A snapshot of a pool's counters, from {@link RefPool#stats()}.
 *
 * <pre>{@code
 * PoolStats stats = pool.stats();
 * System.out.printf("%d live, %d idle, %d pending, %d leaks, %d invalidated%n",
 *         stats.live(), stats.idle(), stats.pendingDecrements(), stats.leaks(),
 *         stats.disposals(DisposalCause.INVALIDATED));
 * }</pre>
 *
 * <p>Counters are read one after another while the pool runs, so a snapshot is not atomic; each
 * value was true at some moment during the call.
 *
 * @param live objects with at least one open handle (or a pending decrement)
 * @param idle objects at count zero and not disposed: idle in the cache, under the validator's
 *     revive check, or evicted from the cache and waiting for their disposal to be applied
 * @param pendingDecrements releases enqueued and not yet applied: decrements of handles closed
 *     off-attachment, and disposals of evicted idle objects
 * @param drains deferred-queue batches applied so far
 * @param creations objects the factory created
 * @param disposals objects disposed
 * @param evictionsByCause idle objects evicted, by cause (every cause present)
 * @param idleHits acquires served by an idle object instead of the factory
 * @param capacityWaiters acquires waiting for capacity right now
 * @param leaks handles found unreachable while open
 * @param disposalsByCause objects disposed, by cause (every cause present; the sum is {@code disposals})
 * @param timeouts waits the pool ended with a {@link io.refpool.sync.WaitTimeoutException}: for an
 *     object, the gate or a section
 * @param heldTooLong handles and calls reported open past the
 *     {@linkplain RefPool.Builder#heldTooLong held-too-long threshold}
 */
public record PoolStats(
        long live,
        long idle,
        long pendingDecrements,
        long drains,
        long creations,
        long disposals,
        Map<EvictionCause, Long> evictionsByCause,
        long idleHits,
        long capacityWaiters,
        long leaks,
        Map<DisposalCause, Long> disposalsByCause,
        long timeouts,
        long heldTooLong) {

    /**
     * Creates a snapshot; pools create these, users read them. Every cause gets a count, zero if
     * its map has none for it (or maps it to {@code null}).
     *
     * @param live objects with at least one open handle (or a pending decrement)
     * @param idle objects at count zero and not disposed
     * @param pendingDecrements releases enqueued and not yet applied
     * @param drains deferred-queue batches applied so far
     * @param creations objects the factory created
     * @param disposals objects disposed
     * @param evictionsByCause idle objects evicted, by cause
     * @param idleHits acquires served by an idle object
     * @param capacityWaiters acquires waiting for capacity right now
     * @param leaks handles found unreachable while open
     * @param disposalsByCause objects disposed, by cause
     * @param timeouts waits the pool ended with a timeout
     * @param heldTooLong handles and calls reported open past the held-too-long threshold
     * @throws NullPointerException if {@code evictionsByCause} or {@code disposalsByCause} is null
     */
    public PoolStats {
        evictionsByCause = everyCause(EvictionCause.class, evictionsByCause, "evictionsByCause");
        disposalsByCause = everyCause(DisposalCause.class, disposalsByCause, "disposalsByCause");
    }

    /** {@return {@code counts} with every cause of {@code causes}, an unmodifiable copy} */
    private static <C extends Enum<C>> Map<C, Long> everyCause(Class<C> causes, Map<C, Long> counts, String name) {
        Objects.requireNonNull(counts, name);
        EnumMap<C, Long> copy = new EnumMap<>(causes);
        for (C cause : causes.getEnumConstants()) {
            Long count = counts.get(cause);
            copy.put(cause, count == null ? Long.valueOf(0) : count);
        }
        return Collections.unmodifiableMap(copy);
    }

    /**
     * {@return objects disposed for {@code cause}}
     *
     * @param cause the cause
     */
    public long disposals(DisposalCause cause) {
        return disposalsByCause.get(Objects.requireNonNull(cause, "cause"));
    }

    /**
     * {@return idle objects evicted for {@code cause}}
     *
     * @param cause the cause
     */
    public long evictions(EvictionCause cause) {
        return evictionsByCause.get(Objects.requireNonNull(cause, "cause"));
    }

    /** {@return idle objects evicted, all causes} */
    public long evictions() {
        long sum = 0;
        for (long n : evictionsByCause.values()) {
            sum += n;
        }
        return sum;
    }
}
