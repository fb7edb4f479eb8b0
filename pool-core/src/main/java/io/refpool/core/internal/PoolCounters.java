package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.EvictionCause;
import io.refpool.core.PoolStats;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Event counters of a pool, striped ({@link LongAdder}) so that counting never adds a contended
 * write; none of them is touched on the attach fast path.
 */
final class PoolCounters {
    final LongAdder drains = new LongAdder();
    final LongAdder creations = new LongAdder();
    final LongAdder idleHits = new LongAdder();
    /** Times an object's count reached 0: with idleHits and disposals, how many objects are idle now. */
    private final LongAdder zeroes = new LongAdder();

    final LongAdder leaks = new LongAdder();
    /** Handles and calls reported open past the held-too-long threshold. */
    final LongAdder heldTooLong = new LongAdder();
    /** Waits the pool ended with a {@code WaitTimeoutException}. */
    final LongAdder timeouts = new LongAdder();

    private final EnumMap<EvictionCause, LongAdder> evictions = new EnumMap<>(EvictionCause.class);
    private final EnumMap<DisposalCause, LongAdder> disposals = new EnumMap<>(DisposalCause.class);

    PoolCounters() {
        for (EvictionCause cause : EvictionCause.values()) {
            evictions.put(cause, new LongAdder());
        }
        for (DisposalCause cause : DisposalCause.values()) {
            disposals.put(cause, new LongAdder());
        }
    }

    void disposed(DisposalCause cause) {
        disposals.get(cause).increment();
    }

    /** An object's count reached 0 (a release, not a disposal). */
    void reachedZero() {
        zeroes.increment();
    }

    /** {@return objects disposed so far, all causes} */
    long disposals() {
        long sum = 0;
        for (LongAdder adder : disposals.values()) {
            sum += adder.sum();
        }
        return sum;
    }

    /** {@return objects disposed for {@code cause} so far} */
    long disposals(DisposalCause cause) {
        return disposals.get(cause).sum();
    }

    /**
     * {@return objects that exist now (live or idle): created and not disposed}, from the counters
     * alone; exact when nothing moves, within the transitions in flight otherwise
     */
    long existing() {
        return Math.max(0, creations.sum() - disposals());
    }

    /**
     * {@return objects at count 0 and not disposed now}, from the counters alone: every object
     * reaches 0 once per idle spell and leaves it by a revive (an idle hit) or its disposal (always
     * from 0). Within the transitions in flight while the pool moves; never below 0 or above
     * {@link #existing()}.
     */
    long idleNow() {
        long disposed = disposals();
        long idle = zeroes.sum() - idleHits.sum() - disposed;
        return Math.max(0, Math.min(idle, creations.sum() - disposed));
    }

    void evicted(EvictionCause cause) {
        evictions.get(cause).increment();
    }

    /** {@return the pool's stats: these counters, and the live and idle objects of {@code slots} counted now} */
    PoolStats snapshot(SlotTable<?, ?> slots, long pendingReleases, long capacityWaiters) {
        long[] liveAndIdle = {0, 0};
        slots.forEachObject(
                entry -> { // an invalidated object still held is live: it holds its permit
                    int count = entry.count();
                    if (count > 0) {
                        liveAndIdle[0]++;
                    } else if (count == 0) {
                        liveAndIdle[1]++;
                    }
                });
        return new PoolStats(
                liveAndIdle[0],
                liveAndIdle[1],
                pendingReleases,
                drains.sum(),
                creations.sum(),
                disposals(),
                evictions(),
                idleHits.sum(),
                capacityWaiters,
                leaks.sum(),
                disposalsByCause(),
                timeouts.sum(),
                heldTooLong.sum());
    }

    Map<DisposalCause, Long> disposalsByCause() {
        EnumMap<DisposalCause, Long> snapshot = new EnumMap<>(DisposalCause.class);
        disposals.forEach((cause, adder) -> snapshot.put(cause, adder.sum()));
        return snapshot;
    }

    Map<EvictionCause, Long> evictions() {
        EnumMap<EvictionCause, Long> snapshot = new EnumMap<>(EvictionCause.class);
        evictions.forEach((cause, adder) -> snapshot.put(cause, adder.sum()));
        return snapshot;
    }
}
