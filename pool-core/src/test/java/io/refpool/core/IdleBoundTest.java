package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Scheduler;
import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
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

    /**
     * Caffeine calls the eviction listener before it removes the entry, and its {@code putIfAbsent}
     * reads the key without the key's lock. A drain that applies the eviction of a live object in that
     * window lets the cache go; the release that idles the object again must then put it in a fresh
     * entry, not take the one that is going for it.
     */
    @Test
    void aPutThatFindsTheObjectInAnEntryBeingEvictedWaitsForTheRemovalAndPutsItAgain() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(0))); // every put is evicted at once
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        CountDownLatch evicting = new CountDownLatch(1);
        CountDownLatch revived = new CountDownLatch(1);
        CountDownLatch drained = new CountDownLatch(1);
        TestKit.Forked<Void> user = TestKit.forkRun("user", () -> {
            try (Attachment attached = pool.attach()) { // attached (and drained) before the eviction
                TestKeyedPoolFixtures.awaitLatch(evicting);
                Handle<Resource> handle = pool.acquire("a"); // revives it: count 1, no drain
                revived.countDown();
                TestKeyedPoolFixtures.awaitLatch(drained);
                handle.close(); // count 0: idles it again, with a put
            }
        });
        TestPoolHooks.Pause listening = hooks.pause(Point.EVICTION_QUEUED, null);
        TestKit.Forked<Void> releaser = TestKit.forkRun(
                "releaser",
                () -> pool.attached(() -> {
                    pool.acquire("a").close(); // idles it; the cache evicts it inside this put
                    return null;
                }));
        listening.awaitArrival(); // the eviction is queued; the cache still shows the entry
        evicting.countDown();
        TestKeyedPoolFixtures.awaitLatch(revived);
        pool.attached(() -> null); // the drain: the object is live, the cache has let go of it
        drained.countDown();
        // the user's put has looked at the key: it waits for the entry's removal (or, once it took
        // the going entry for its own, for the cache's maintenance the evicting thread holds)
        eventually()
                .until(() -> user.thread.getState() == Thread.State.BLOCKED
                        || user.thread.getState() == Thread.State.WAITING);
        listening.proceed();
        releaser.join();
        user.join();

        pool.flush(); // the eviction of the new entry, if the put made one, is applied
        assertEquals(
                pool.stats().idle(),
                pool.core().control().cachedCount(),
                () -> "every idle object is in the cache: " + pool.stats());
        assertEquals(0, pool.stats().idle(), "the bound of 0 evicted the object again, and it was disposed");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * Two releases of one object, in successive idle spells, both find it uncached and put it. When
     * the first put's entry has expired by the time the second arrives, Caffeine reports that expiry
     * and gives the same entry to the second put, which holds the same object. The drain of the
     * report disposes the object (idle since the put it was cached in), and takes it out of the
     * entry the second put left: no disposed object stays cached.
     */
    @Test
    void aPutThatTakesOverTheObjectsOwnExpiredEntryLeavesNoDisposedObjectCached() throws Exception {
        RefPool<String, Resource> pool = resources.build(expiringPool());
        secondPutTakesOverTheExpiredEntry(pool, false);

        pool.flush(); // the report is applied: idle since the put that cached it, the object is disposed
        assertEquals(1, resources.disposalCount(), "the expired object was disposed");
        assertEquals(0, pool.core().control().cachedCount(), "and no disposed object stays cached");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * As above, but the object is in use when the expiry report is applied: the drain lets it be
     * (marking it uncached) while the entry the second put left still holds it. A disposal on demand
     * then asks the cache, not the mark, and takes it out.
     */
    @Test
    void anObjectMarkedUncachedThatAnEntryStillHoldsLeavesTheCacheWhenInvalidated() throws Exception {
        RefPool<String, Resource> pool = resources.build(expiringPool());
        Handle<Resource> inUse = secondPutTakesOverTheExpiredEntry(pool, true); // report applied: live
        assertEquals(1, pool.core().control().cachedCount(), "marked uncached, the entry still holds it");

        assertTrue(pool.invalidate("a")); // retired while in use
        pool.attached(() -> {
            inUse.close(); // count 0, retired: disposed now
            return null;
        });
        assertEquals(1, resources.disposalCount(), "the invalidated object was disposed");
        assertEquals(0, pool.core().control().cachedCount(), "and it left the cache");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    private final AtomicLong ticker = new AtomicLong();

    /** {@return a builder whose idle cache expires an entry a minute after its write, on {@link #ticker}} */
    private RefPool.Builder<String, Resource> expiringPool() {
        return resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.expireAfterWrite(Duration.ofMinutes(1))
                        .ticker(ticker::get)
                        .scheduler(Scheduler.disabledScheduler()));
    }

    /**
     * Forces two puts of key {@code "a"}'s object, in idle spells 1 and 2, the first put's entry
     * expiring before the second put arrives: the second takes it over and Caffeine reports the
     * expiry of the same object. With {@code keepUsing} the second releaser revives the object
     * again before it detaches, and its detach applies the report to a live object.
     *
     * @return the second releaser's handle with {@code keepUsing}, otherwise {@code null}
     */
    private Handle<Resource> secondPutTakesOverTheExpiredEntry(RefPool<String, Resource> pool, boolean keepUsing)
            throws Exception {
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Handle<Resource> first = pool.attached(() -> pool.acquire("a"));
        TestKit.Forked<Void> earlier = TestKit.unstartedRun(
                "earlier-idler",
                () -> pool.attached(() -> {
                    first.close(); // count 0, spell 1: its put is held before it starts
                    return null;
                }));
        TestPoolHooks.Pause earlierPut = hooks.pause(Point.BEFORE_CACHE_PUT, earlier.thread);
        earlier.start();
        earlierPut.awaitArrival();
        TestKit.Forked<Handle<Resource>> later = TestKit.unstarted(
                "later-idler",
                () -> pool.attached(() -> {
                    pool.acquire("a").close(); // revives it and idles it again, spell 2: this put is held too
                    return keepUsing ? pool.acquire("a") : null;
                }));
        TestPoolHooks.Pause laterPut = hooks.pause(Point.BEFORE_CACHE_PUT, later.thread);
        later.start();
        laterPut.awaitArrival();

        earlierPut.proceed();
        earlier.join(); // the cache takes the object
        ticker.addAndGet(Duration.ofMinutes(2).toNanos()); // its entry expires; no maintenance has run
        laterPut.proceed();
        return later.join(); // its put found the object's own entry expired: reported, the entry kept
    }

    /**
     * A put that leaves the cache over its bound while another thread runs the cache's maintenance
     * (which holds the cache's lock) hands its round to that thread and returns without waiting for
     * the lock; that thread brings the cache within its bound before its own put returns. (Here
     * that thread's put would also see the cache over its bound after its maintenance; a runner
     * with no put of its own to finish is {@code CacheMaintenanceTest}'s.)
     */
    @Test
    void aPutOverTheSizeBoundDuringAnotherThreadsMaintenanceHandsItOverAndReturns() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(1)));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        pool.attached(() -> {
            pool.acquire("a").close(); // the cache holds a
            return null;
        });
        TestKit.Forked<Void> evicting = TestKit.unstartedRun(
                "evicting",
                () -> pool.attached(() -> {
                    pool.acquire("b").close(); // over the bound: its put's maintenance evicts one
                    return null;
                }));
        TestPoolHooks.Pause inMaintenance = hooks.pause(Point.EVICTION_QUEUED, evicting.thread);
        evicting.start();
        inMaintenance.awaitArrival(); // inside the cache's maintenance, under its lock

        TestKit.Forked<Void> putting = TestKit.unstartedRun(
                "putting",
                () -> pool.attached(() -> {
                    pool.acquire(keyApartFrom("a", "b")).close();
                    return null;
                }));
        TestPoolHooks.Pause afterPut = hooks.pause(Point.AFTER_IDLE_PUT, putting.thread);
        putting.start();
        afterPut.awaitArrival(); // the put returned while the lock is held
        assertTrue(pool.core().control().cachedCountAsItIs() > 1, "the put left the cache over its bound");

        TestPoolHooks.Pause evictingPutReturned = hooks.pause(Point.AFTER_IDLE_PUT, evicting.thread);
        inMaintenance.proceed();
        evictingPutReturned.awaitArrival(); // ran the round it was handed, after its own maintenance
        assertEquals(
                1,
                pool.core().control().cachedCountAsItIs(),
                "within the bound once both puts returned, before either thread touched the cache again");
        evictingPutReturned.proceed();
        afterPut.proceed();
        evicting.join();
        putting.join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * With a weight bound the put cannot see that it left the cache over its bound: the cache's
     * weighted size counts only the writes its maintenance has taken in, and another thread's
     * maintenance, under way, will not take this one in. So every put asks for a round; here the
     * other thread's maintenance is the cache's own {@code cleanUp()}, held where it reads the clock.
     */
    @Test
    void aPutUnderAWeightBoundDuringAnotherThreadsMaintenanceLeavesTheCacheWithinItsBound() throws Exception {
        AtomicLong now = new AtomicLong();
        AtomicReference<Thread> holdOnRead = new AtomicReference<>();
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch read = new CountDownLatch(1);
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .ticker(() -> {
                    if (holdOnRead.compareAndSet(Thread.currentThread(), null)) {
                        reading.countDown(); // inside the cache's maintenance, under its lock
                        TestKeyedPoolFixtures.awaitLatch(read);
                    }
                    return now.get();
                })
                .idle(cache ->
                        cache.maximumWeight(2).weigher((key, value) -> 1).expireAfterWrite(Duration.ofHours(1))));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        pool.attached(() -> {
            pool.acquire("a").close();
            pool.acquire("b").close(); // the cache at its bound, every write taken in
            return null;
        });
        TestKit.Forked<Long> maintaining =
                TestKit.unstarted("maintaining", () -> pool.core().control().cachedCount());
        holdOnRead.set(maintaining.thread);
        maintaining.start();
        assertTrue(reading.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS), "the maintenance did not start");

        TestKit.Forked<Void> putting = TestKit.unstartedRun(
                "putting",
                () -> pool.attached(() -> {
                    pool.acquire("c").close(); // the weighted size it reads still says 2 of 2
                    return null;
                }));
        TestPoolHooks.Pause afterPut = hooks.pause(Point.AFTER_IDLE_PUT, putting.thread);
        putting.start();
        TestKit.awaitParked(putting.thread); // its put returned (held after it), or it waits for the lock
        read.countDown();
        maintaining.join();
        afterPut.awaitArrival();
        assertEquals(2, pool.core().control().cachedCountAsItIs(), "within the bound once both have returned");
        afterPut.proceed();
        putting.join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * {@return a key whose bin in a hash table of 16 or more differs from those of {@code taken}}: the
     * cache's listener runs inside the evicted key's bin lock, which a put to the same bin would wait
     * for
     */
    private static String keyApartFrom(String... taken) {
        for (int i = 0; ; i++) {
            String key = "c" + i;
            boolean apart = true;
            for (String other : taken) {
                apart &= bin(key) != bin(other);
            }
            if (apart) {
                return key;
            }
        }
    }

    /** The low bits of the bin {@link java.util.concurrent.ConcurrentHashMap} puts a key in. */
    private static int bin(String key) {
        int h = key.hashCode();
        return (h ^ (h >>> 16)) & 15;
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
