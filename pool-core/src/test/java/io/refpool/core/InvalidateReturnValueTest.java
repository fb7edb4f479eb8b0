package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * {@code pool.invalidate(key)} and {@code pool.invalidate(key, object)} say whether <em>this call</em>
 * retired the key's object. An object another path already claimed for disposal (clearIdle, an
 * eviction, capacity, a release at count 0 with no cache) keeps its slot until its disposer returns;
 * an invalidation that finds it there retired nothing and must say so.
 */
class InvalidateReturnValueTest {
    private static void await(CountDownLatch latch) {
        TestKeyedPoolFixtures.awaitLatch(latch);
    }

    private static final class Fixture {
        final List<DisposalCause> causes = new CopyOnWriteArrayList<>();
        final Map<Object, Integer> disposals = new ConcurrentHashMap<>();
        final List<PoolError> errors = new CopyOnWriteArrayList<>();
        final CountDownLatch disposing = new CountDownLatch(1);
        final CountDownLatch finish = new CountDownLatch(1);
        volatile boolean block = true;

        RefPool<String, Object> pool(boolean idleCache) {
            RefPool.Builder<String, Object> builder = RefPool.<String, Object>builder(key -> new Object())
                    .attachMode(AttachMode.SHARED)
                    .drainDelay(Duration.ofHours(1))
                    .errorListener(errors::add)
                    .disposer((String key, Object value, DisposalCause cause) -> {
                        causes.add(cause);
                        disposals.merge(value, 1, Integer::sum);
                        if (block) {
                            block = false;
                            disposing.countDown();
                            await(finish);
                        }
                    });
            if (idleCache) {
                builder.idle(cache -> cache.maximumSize(10).executor(Runnable::run));
            }
            return builder.build();
        }
    }

    @Test
    void invalidateOfAnObjectClearIdleIsDisposingRetiresNothing() throws Exception {
        Fixture f = new Fixture();
        RefPool<String, Object> pool = f.pool(true);
        Object first = pool.call("a", v -> v); // idle now
        TestKit.Forked<Integer> clearer = fork("clearer", pool::clearIdle);
        await(f.disposing); // claimed as CLEARED, its disposer running, still in the key's slot

        boolean byKey = pool.invalidate("a");
        boolean byObject = pool.invalidate("a", first);

        f.finish.countDown();
        assertEquals(1, clearer.join());
        assertEquals(List.of(DisposalCause.CLEARED), f.causes);
        assertFalse(byKey, "invalidate(key) retired nothing: clearIdle had claimed the object already");
        assertFalse(byObject, "invalidate(key, object) retired nothing either");
        assertEquals(0, pool.stats().disposals(DisposalCause.INVALIDATED));
        pool.close();
        assertEquals(List.of(), f.errors);
        assertTrue(f.disposals.values().stream().allMatch(n -> n == 1));
    }

    @Test
    void invalidateOfAnObjectReleasedToZeroWithoutACacheRetiresNothing() throws Exception {
        Fixture f = new Fixture();
        RefPool<String, Object> pool = f.pool(false);
        Handle<Object> handle = pool.attached(() -> pool.acquire("a"));
        TestKit.Forked<Void> closer = fork("closer", () -> {
            pool.attached(() -> {
                handle.close(); // count 0, no cache: disposed RELEASED on this thread
                return null;
            });
            return null;
        });
        await(f.disposing);

        boolean byKey = pool.invalidate("a");

        f.finish.countDown();
        closer.join();
        assertEquals(List.of(DisposalCause.RELEASED), f.causes);
        assertFalse(byKey, "invalidate(key) retired nothing: the object was already being disposed");
        pool.close();
        assertEquals(List.of(), f.errors);
    }
}
