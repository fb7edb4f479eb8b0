package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A handle the leak detector found unreachable has had its reference released for it: the
 * held-too-long watch must stop watching it, or it reports (long after) a handle that no longer
 * exists as "open for N ms", and keeps its record, acquisition stack included, for the life of
 * the pool: one per leak.
 */
class LeakedHandleHeldTooLongTest {
    @Test
    void aLeakedHandleReleasedByTheLeakDetectorIsNoLongerWatchedAsHeld() {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(AttachMode.SHARED)
                .leakDetection(LeakDetection.PARANOID)
                .heldTooLong(Duration.ofHours(1))
                .drainDelay(Duration.ofMillis(10))
                .errorListener(errors::add)
                .build();
        pool.attached(() -> pool.acquire("a")); // dropped unclosed
        eventually().pollInterval(Duration.ofMillis(20)).until(() -> {
            System.gc();
            PoolStats stats = pool.stats();
            return stats.leaks() == 1 && stats.pendingDecrements() == 0 && stats.live() == 0;
        });

        int reported = pool.core()
                .checkHeldForTests(System.nanoTime() + Duration.ofHours(2).toNanos());

        assertEquals(0, reported, "the leaked handle is gone: its reference was released at the leak");
        assertEquals(0, pool.stats().heldTooLong());
        pool.close();
    }
}
