package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The drain of an eviction whose object was used since the cache took it: the object is put back
 * in the cache, or disposed if the cache refuses it.
 */
class EvictionPutBackTest {
    /**
     * A hot key's object is idle, but its cache entry, put long before, has expired, so a capacity
     * waiter's reclaim does not see it: the reclaim evicts the entry, and the drain of that eviction,
     * finding the object used since the put, puts it back. It goes to the line then, as at any
     * other zero; before, the waiter waited while the only object idled.
     */
    @Test
    void aWaiterInLineGetsAnObjectThatTheDrainOfItsEvictionPutsBack() throws Exception {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .maxObjects(1)
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofMillis(20))
                .ticker(ticker)
                .idle(cache -> cache.expireAfterWrite(Duration.ofMinutes(10))));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);

        Handle<Session> a;
        try (Attachment at = pool.attach()) {
            pool.acquire("a").close(); // put in the cache at t = 0
            a = pool.acquire("a"); // revived: the cache keeps its entry (lazy tier)
        }
        PointPauses.Pause joining = hooks.pause(Point.CAPACITY_JOINING, null);
        TestKit.Forked<CompletableFuture<Handle<Session>>> asker = TestKit.fork(
                "asker", () -> pool.acquireAsync("b", CancellationToken.none()).toCompletableFuture());
        joining.awaitArrival(); // "a" is live: its attempt found no permit and nothing idle
        try (Attachment at = pool.attach()) {
            a.close(); // nobody counted in line yet: "a" idles (cached already: no cache write)
        }
        ticker.advance(Duration.ofMinutes(11)); // its entry, put at 0, has expired
        joining.proceed(); // counted in line, it reclaims idle objects
        CompletableFuture<Handle<Session>> b = asker.join();
        Handle<Session> got;
        try {
            got = b.get(5, TimeUnit.SECONDS);
        } catch (TimeoutException stuck) {
            PoolStats stats = pool.stats();
            long cached = pool.core().control().cachedCountAsItIs();
            pool.close();
            throw new AssertionError("the waiter for 'b' waited 5 s while 'a', the only object, was idle (cache holds "
                    + cached + "): " + stats);
        }
        assertEquals("b", got.get().key);
        try (Attachment at = pool.attach()) {
            got.close();
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
    /** An object the drain of its eviction cannot put back is disposed and counted as evicted. */
    @Test
    void anObjectTheCacheRefusesBackIsCountedAsEvicted() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        AtomicInteger weighs = new AtomicInteger();
        RefPool<String, Session> pool =
                engine.build(engine.builder().drainDelay(Duration.ofHours(1)).idle(cache -> cache.expireAfterWrite(
                                Duration.ofMinutes(10))
                        .maximumWeight(100)
                        .weigher((k, v) -> {
                            if (weighs.incrementAndGet() == 2) {
                                throw new IllegalStateException("weigher: second call");
                            }
                            return 1;
                        })
                        .ticker(ticker)
                        .executor(Runnable::run)));
        Session a;
        try (Attachment at = pool.attach()) {
            try (Handle<Session> h = pool.acquire("a")) { // put at 0: weigh #1
                a = h.get();
            }
            pool.acquire("a").close(); // used since the put: revived and idled, no cache write
        }
        ticker.advance(Duration.ofMinutes(11));
        pool.core().control().cachedCount(); // the cache's maintenance evicts the expired entry
        pool.flush(); // the drain: used since, put again: weigh #2 throws, disposed instead
        assertTrue(a.isDisposed());
        PoolStats stats = pool.stats();
        assertEquals(
                stats.disposals(DisposalCause.EXPIRED) + stats.disposals(DisposalCause.SIZE),
                stats.evictions(EvictionCause.EXPIRED) + stats.evictions(EvictionCause.SIZE),
                "disposed as evicted by the cache, but not counted as an eviction: " + stats);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
