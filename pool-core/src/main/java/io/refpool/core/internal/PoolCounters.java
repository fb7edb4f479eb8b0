package io.refpool.core.internal;

import io.refpool.core.EvictionCause;
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

    Map<EvictionCause, Long> evictions() {
        EnumMap<EvictionCause, Long> snapshot = new EnumMap<>(EvictionCause.class);
        evictions.forEach((cause, adder) -> snapshot.put(cause, adder.sum()));
        return snapshot;
    }
}
