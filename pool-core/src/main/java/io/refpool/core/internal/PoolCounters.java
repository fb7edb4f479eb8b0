package io.refpool.core.internal;

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
    final LongAdder disposals = new LongAdder();
    final LongAdder idleHits = new LongAdder();
    final LongAdder leaks = new LongAdder();
    private final EnumMap<EvictionCause, LongAdder> evictions = new EnumMap<>(EvictionCause.class);

    PoolCounters() {
        for (EvictionCause cause : EvictionCause.values()) {
            evictions.put(cause, new LongAdder());
        }
    }

    void evicted(EvictionCause cause) {
        evictions.get(cause).increment();
    }

    /** {@return the pool's stats: these counters, and the live and idle objects of {@code slots} counted now} */
    PoolStats snapshot(SlotTable<?, ?> slots, long pendingReleases, long capacityWaiters) {
        long[] liveAndIdle = {0, 0};
        slots.forEachEntry(entry -> {
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
                disposals.sum(),
                evictions(),
                idleHits.sum(),
                capacityWaiters,
                leaks.sum());
    }

    Map<EvictionCause, Long> evictions() {
        EnumMap<EvictionCause, Long> snapshot = new EnumMap<>(EvictionCause.class);
        evictions.forEach((cause, adder) -> snapshot.put(cause, adder.sum()));
        return snapshot;
    }
}
