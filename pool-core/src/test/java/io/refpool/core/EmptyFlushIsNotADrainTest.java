package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * {@code stats().drains()} and {@code refpool.drains} count "deferred-queue batches applied". A
 * {@code flush()} that finds nothing pending applies none: before the fix each one counted a drain
 * (and recorded an {@code io.refpool.Drain} event of batch size 0), so a host that flushes before
 * each stats read, as the guide's {@code settledStats()} does, counted its reads as drains.
 */
class EmptyFlushIsNotADrainTest {
    @Test
    void aFlushWithNothingPendingCountsNoDrain() {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .name("flushes")
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RefPoolMetrics(pool).bindTo(registry);

        pool.flush();
        pool.flush();
        assertEquals(0, pool.stats().drains(), "nothing was pending: no batch was applied");

        Handle<StringBuilder> handle = pool.attached(() -> pool.acquire("a"));
        handle.close(); // off the attachment: one pending release
        assertEquals(1, pool.stats().pendingDecrements());
        pool.flush(); // applies it: one batch
        pool.flush(); // nothing left
        assertEquals(1, pool.stats().drains());
        assertEquals(1.0, registry.get("refpool.drains").functionCounter().count());
        pool.close();
    }
}
