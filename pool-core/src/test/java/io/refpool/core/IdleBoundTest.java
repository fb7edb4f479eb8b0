package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The idle cache's size bound under the lazy idle tier: a put of an object on its way out never
 * displaces the key's current object from the cache, and after concurrent traffic has stopped and
 * the pool is flushed, no more objects are idle than the bound.
 */
class IdleBoundTest {
    private final TestResources resources = new TestResources();

    @Test
    void aStalePutOfADisposedObjectNeverDisplacesTheKeysCurrentObject() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(10).executor(Runnable::run)));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Handle<Resource> old = pool.attached(() -> pool.acquire("k"));
        TestKit.Forked<Void> releaser = TestKit.unstartedRun(
                "releaser",
                () -> pool.attached(() -> {
                    old.close(); // count 0: the old object is on its way into the cache
                    return null;
                }));
        TestPoolHooks.Pause beforePut = hooks.pause(Point.BEFORE_IDLE_PUT, releaser.thread);
        releaser.start();
        beforePut.awaitArrival();

        assertTrue(pool.invalidate("k"), "the old object is disposed while its put is in flight");
        pool.attached(() -> {
            pool.acquire("k").close(); // the key's new object idles: the cache holds it
            return null;
        });
        assertEquals(1, pool.core().control().cachedCount());
        beforePut.proceed(); // the old object's put lands now
        releaser.join();

        assertEquals(1, pool.stats().idle(), "the new object idles");
        assertEquals(
                1,
                pool.core().control().cachedCount(),
                "and the cache still holds it: the stale put displaced nothing");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void afterConcurrentRequestsAndAFlushNoMoreObjectsIdleThanTheBound() throws Exception {
        RefPool<String, Resource> pool = resources.build(
                resources.builder().attachMode(AttachMode.SHARED).idle(cache -> cache.maximumSize(16)));
        String[] keys = new String[64];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "t" + i;
        }
        CountDownLatch start = new CountDownLatch(1);
        TestKit.Action requests = () -> {
            TestKeyedPoolFixtures.awaitLatch(start);
            SplittableRandom random = new SplittableRandom();
            for (int i = 0; i < 1_000_000; i++) { // most requests to 16 hot tenants, one in eight to any
                String key = keys[random.nextInt(8) == 0 ? random.nextInt(64) : random.nextInt(16)];
                pool.call(key, resource -> resource);
            }
        };
        TestKit.Forked<Void> first = TestKit.forkRun("requests-1", requests);
        TestKit.Forked<Void> second = TestKit.forkRun("requests-2", requests);
        start.countDown();
        first.join();
        second.join();
        pool.flush(); // evictions the last puts queued are applied
        assertTrue(
                pool.stats().idle() <= 16,
                () -> pool.stats() + ", cached " + pool.core().control().cachedCount());
        assertEquals(pool.stats().idle(), pool.core().control().cachedCount(), "every idle object is in the cache");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
