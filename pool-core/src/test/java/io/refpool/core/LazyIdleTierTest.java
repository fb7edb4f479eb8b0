package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The idle tier removes entries lazily: a revive and the next idle touch only the object's entry, so
 * a request that revives an idle object and idles it again never writes the cache. These tests pin
 * the slack that buys, as the idle tier documents it: the size bound counts revived objects the
 * cache still holds, so never more than that many objects are idle in it; an object idle since the
 * cache took it is disposed by expiry after one period, and one used since within two periods of
 * its last idle; an object the cache evicts while it is live is never disposed for it. The tests
 * run the cache's maintenance with a new key's put: a revive and an idle write nothing, and the
 * pool's scheduler, which runs it in production, reads real time, not the test's ticker.
 */
class LazyIdleTierTest {
    private static final Duration EXPIRY = Duration.ofMinutes(1);

    /** Acquires and closes {@code key} on an attached thread: a revive and an idle if it is idle. */
    private static Session use(RefPool<String, Session> pool, String key) {
        try (Attachment attached = pool.attach();
                Handle<Session> handle = pool.acquire(key)) {
            return handle.get();
        }
    }

    @Test
    void reviveAndIdleCyclesWriteTheCacheOnceNotOncePerCycle() {
        Engine engine = new Engine();
        AtomicInteger puts = new AtomicInteger(); // the weigher runs once per put
        RefPool<String, Session> pool = engine.build(
                engine.builder().idle(cache -> cache.maximumWeight(100).weigher((key, value) -> {
                    puts.incrementAndGet();
                    return 1;
                })));
        Session first = use(pool, "k");
        assertEquals(1, puts.get(), "the first idle puts the object");
        for (int i = 0; i < 1_000; i++) {
            assertSame(first, use(pool, "k"), "revived, never created again");
        }
        assertEquals(1, puts.get(), "1,000 revives and idles wrote the cache no more");
        assertEquals(1_000, pool.stats().idleHits());
        assertEquals(1, pool.stats().idle());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anObjectIdleSinceTheCacheTookItExpiresAfterOnePeriod() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = expiring(engine, ticker);
        Session k = use(pool, "k"); // put at 0
        ticker.advance(EXPIRY.plusSeconds(1));
        use(pool, "trigger"); // a new key's put runs the expiry; the detach applies the eviction
        assertTrue(k.isDisposed(), "idle for a whole period since the put");
        assertEquals(1, pool.stats().evictions(EvictionCause.EXPIRED));
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anObjectUsedSinceTheCacheTookItIsDisposedWithinTwoPeriodsOfItsLastIdle() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = expiring(engine, ticker);
        Session k = use(pool, "k"); // put at 0
        ticker.advance(EXPIRY.multipliedBy(9).dividedBy(10));
        assertSame(k, use(pool, "k")); // used at 0.9: revived and idled, no cache write
        ticker.advance(EXPIRY.multipliedBy(2).dividedBy(10)); // 1.1: the entry expires in the cache
        use(pool, "trigger-1"); // a new key's put runs the cache's maintenance (a revive writes nothing)
        assertFalse(k.isDisposed(), "used 0.2 periods ago: put again, not disposed");
        assertEquals(0, pool.stats().evictions(EvictionCause.EXPIRED));
        ticker.advance(EXPIRY.plusSeconds(1)); // 2.1 + 1 s: idle since 0.9, under two periods
        use(pool, "trigger-2");
        assertTrue(k.isDisposed(), "disposed within two periods of its last idle");
        assertEquals(2, pool.stats().evictions(EvictionCause.EXPIRED), "\"k\" and \"trigger-1\"");
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void theCacheNeverDisposesALiveObjectAndTakesItAgainWhenItIdles() {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().drainDelay(Duration.ofHours(1)).idle(cache -> cache.maximumSize(1)
                        .executor(Runnable::run)));
        Session k = use(pool, "k"); // idle, cached
        try (Attachment attached = pool.attach();
                Handle<Session> live = pool.acquire("k")) { // revived: the cache still holds it
            for (String other : new String[] {"a", "b", "c"}) {
                pool.acquire(other).close(); // each put evicts one of the two the cache holds
            }
            pool.attach().close(); // a nested attach applies the queued evictions
            assertFalse(k.isDisposed(), "evicted while live: the cache lets go of it, nothing more");
            assertSame(k, live.get());
        } // "k" idles again: put back into the cache, whose policy decides about it anew
        assertEquals(0, pool.stats().live());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void neverMoreIdleObjectsThanTheSizeBound() {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().idle(cache -> cache.maximumSize(2).executor(Runnable::run)));
        for (int round = 0; round < 3; round++) {
            for (int key = 0; key < 6; key++) {
                use(pool, "k" + key);
                assertTrue(pool.stats().idle() <= 2, "round " + round + ", key " + key + ": " + pool.stats());
            }
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    private static RefPool<String, Session> expiring(Engine engine, ManualTicker ticker) {
        return engine.build(engine.builder()
                .idle(cache -> cache.expireAfterAccess(EXPIRY).ticker(ticker).executor(Runnable::run)));
    }
}
