package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.lang.reflect.Field;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stats snapshot's disposals by cause add up to its disposals, also when an object is disposed
 * while the snapshot is taken: the disposal is forced into the middle of the snapshot by holding
 * the counters' lock, which the snapshot takes to read the idle hits.
 */
@Timeout(60)
class PoolStatsSnapshotTest {
    private static Object field(Object owner, String name) throws Exception {
        Field f = owner.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(owner);
    }

    @Test
    void aSnapshotsDisposalsByCauseAddUpToItsDisposals() throws Exception {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(k -> new Object())
                .idle(cache -> cache.maximumSize(10))
                .build();
        pool.attached(() -> {
            pool.acquire("a").close(); // idle in the cache
            return null;
        });
        Object counters = field(pool.core(), "counters");
        Object countingLock = field(counters, "counting");
        Forked<PoolStats> snapshot;
        synchronized (countingLock) {
            snapshot = TestKit.fork("stats", pool::stats);
            // the snapshot read disposals() and waits at idleHits(), before disposalsByCause()
            eventually().until(() -> snapshot.thread.getState() == Thread.State.BLOCKED);
            assertEquals(1, pool.clearIdle(), "the idle object disposed, CLEARED");
        }
        PoolStats stats = snapshot.join();
        long sum = stats.disposalsByCause().values().stream()
                .mapToLong(Long::longValue)
                .sum();
        pool.close();
        assertEquals(stats.disposals(), sum, "disposalsByCause adds up to disposals: " + stats);
    }
}
