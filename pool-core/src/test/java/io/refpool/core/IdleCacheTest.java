package io.refpool.core;

import static io.refpool.core.TestKeyedPoolFixtures.awaitLatch;
import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The idle cache: an object whose count reaches zero idles and is revived by the next acquire
 * without a factory call; taking it back never disposes it (the cache keeps its entry); expiry and
 * size eviction dispose it exactly once, attached, through the deferred queue.
 */
class IdleCacheTest {
    private static final Duration EXPIRY = Duration.ofMinutes(1);

    /** A cache whose clock the test moves and whose maintenance runs on the writing thread. */
    private static RefPool<String, Session> expiringPool(Engine engine, ManualTicker ticker) {
        return engine.build(engine.builder()
                .idle(cache -> cache.expireAfterAccess(EXPIRY).ticker(ticker).executor(Runnable::run)));
    }

    /** Writes the cache (idles {@code key}), which runs its maintenance: expired objects are evicted. */
    private static void idle(RefPool<String, Session> pool, String key) {
        try (Attachment attached = pool.attach()) {
            pool.acquire(key).close();
        }
    }

    @Test
    void aReleaseToZeroIdlesTheObjectAndTheNextAcquireRevivesIt() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(
                engine.builder().idle(cache -> cache.maximumSize(10).executor(Runnable::run)));
        Session first;
        try (Attachment attached = pool.attach()) {
            try (Handle<Session> handle = pool.acquire("tenant-7")) {
                first = handle.get();
                assertEquals(1, pool.stats().live());
                assertEquals(0, pool.stats().idle());
            }
            assertEquals(0, pool.stats().live());
            assertEquals(1, pool.stats().idle());
            for (int i = 1; i <= 100; i++) {
                try (Handle<Session> handle = pool.acquire("tenant-7")) {
                    assertSame(first, handle.get(), "revived, not created again");
                    assertFalse(first.isDisposed(), "taken back from the cache, not disposed");
                    assertEquals(i, pool.stats().idleHits());
                }
            }
        }
        assertEquals(1, engine.factoryCalls.get());
        assertEquals(0, pool.stats().disposals(), "taking an object back from the cache never disposes");
        assertEquals(0, pool.stats().evictions());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void expiryDisposesTheObjectExactlyOnceAttached() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = expiringPool(engine, ticker);
        idle(pool, "a");
        ticker.advance(EXPIRY.plusSeconds(1));
        idle(pool, "b"); // the write expires "a"; the detach applies the queued eviction

        assertEquals(1, engine.disposed.size());
        assertEquals("a", engine.disposed.get(0).key);
        assertEquals(1, pool.stats().evictions(EvictionCause.EXPIRED));
        assertEquals(1, pool.stats().idle());

        ticker.advance(EXPIRY.plusSeconds(1));
        idle(pool, "c"); // expires "b"; "a" is not disposed again
        assertEquals(List.of("a", "b"), engine.disposed.stream().map(s -> s.key).toList());
        assertEquals(2, pool.stats().evictions(EvictionCause.EXPIRED));
        engine.assertNoViolations();
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anObjectRevivedAfterItsEvictionWasQueuedStaysLive() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = expiringPool(engine, ticker);
        idle(pool, "a");
        ticker.advance(EXPIRY.plusSeconds(1));
        try (Attachment attached = pool.attach()) {
            pool.acquire("b").close(); // queues the eviction of "a", applied when this thread detaches
            assertEquals(1, pool.stats().pendingDecrements(), "the eviction of 'a' is queued");
            try (Handle<Session> a = pool.acquire("a")) {
                pool.attach().close(); // a nested attach applies the queued eviction now
                assertFalse(a.get().isDisposed(), "the eviction lost to the revival");
                assertEquals(2, engine.factoryCalls.get(), "'a' was revived, not created again");
            }
        }
        assertEquals(0, pool.stats().evictions(EvictionCause.EXPIRED));
        assertEquals(0, pool.stats().disposals());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anObjectIdledAgainBeforeItsQueuedEvictionIsAppliedStaysIdle() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = expiringPool(engine, ticker);
        idle(pool, "a");
        ticker.advance(EXPIRY.plusSeconds(1));
        try (Attachment attached = pool.attach()) {
            pool.acquire("b").close(); // queues the eviction of "a"
            pool.acquire("a").close(); // revives "a" and idles it again, freshly used
            pool.attach().close(); // applies the stale eviction
            assertFalse(engine.created.get(0).isDisposed(), "the eviction was for an idle spell that ended");
            assertEquals(2, pool.stats().idle());
        }
        try (Attachment attached = pool.attach();
                Handle<Session> a = pool.acquire("a")) {
            assertSame(engine.created.get(0), a.get(), "revived from the cache, not created again");
        }
        assertEquals(2, engine.factoryCalls.get());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anObjectRevivedWhileItsReleaserPutsItInTheCacheIsNeverDisposedWhileLive() throws Exception {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        CountDownLatch inPut = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicReference<Thread> pauseIn = new AtomicReference<>();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                // the weigher runs inside the cache's put, before the object is in the map
                .idle(cache -> cache.maximumWeight(100)
                        .weigher((key, value) -> {
                            if (Thread.currentThread() == pauseIn.get()) {
                                inPut.countDown();
                                awaitLatch(proceed);
                            }
                            return 1;
                        })
                        .expireAfterAccess(EXPIRY)
                        .ticker(ticker)
                        .executor(Runnable::run)));
        Handle<Session> first;
        try (Attachment attached = pool.attach()) {
            first = pool.acquire("k");
        }
        TestKit.Forked<Void> releaser = TestKit.unstarted("releaser", () -> {
            try (Attachment attached = pool.attach()) {
                first.close(); // count 0: on its way into the cache
            }
            return null;
        });
        pauseIn.set(releaser.thread);
        releaser.start();
        assertTrue(inPut.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        Session object;
        try (Attachment attached = pool.attach();
                Handle<Session> revived = pool.acquire("k")) { // count 0 to 1, before the put lands
            object = revived.get();
            proceed.countDown();
            releaser.join(); // the put lands: the cache holds a live object (entries go lazily)
            ticker.advance(EXPIRY.plusSeconds(1));
            pool.acquire("other").close(); // a write: the cache expires what it holds
            pool.attach().close(); // a nested attach applies the queued eviction
            assertEquals(0, pool.stats().pendingDecrements());
            assertFalse(object.isDisposed(), "an eviction of a live object only lets the cache go of it");
            assertEquals(0, pool.stats().evictions(EvictionCause.EXPIRED));
        } // count 0: idled, and put in the cache again, whose clock starts now
        ticker.advance(EXPIRY.plusSeconds(1));
        try (Attachment attached = pool.attach()) {
            pool.acquire("another").close(); // a new key's put expires "k" (a revive writes nothing)
        }
        assertTrue(object.isDisposed(), "idle for a whole expiry after it was put again: disposed");
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aShortRealExpiryDisposesOnTheDrainerAttached() {
        Engine engine = new Engine();
        List<String> disposingThreads = new CopyOnWriteArrayList<>();
        engine.afterDispose =
                session -> disposingThreads.add(Thread.currentThread().getName());
        RefPool<String, Session> pool = engine.build(engine.builder()
                .drainDelay(Duration.ofMillis(10))
                // long enough that the test thread has detached before it passes, even on a loaded
                // machine: after that only the drainer applies the eviction
                .idle(cache -> cache.expireAfterAccess(Duration.ofMillis(500))));
        idle(pool, "a");

        eventually().until(() -> pool.stats().disposals() == 1);
        engine.assertNoViolations(); // the drainer disposed it attached
        assertTrue(disposingThreads.get(0).startsWith("refpool-drainer"), disposingThreads.toString());
        assertEquals(1, pool.stats().evictions(EvictionCause.EXPIRED));
        assertEquals(0, pool.stats().idle());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void sizeEvictionDisposesEachEvictedObjectExactlyOnceAttached() {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().drainDelay(Duration.ofMillis(10)).idle(cache -> cache.maximumSize(2)
                        .executor(Runnable::run)));
        for (int i = 0; i < 5; i++) {
            idle(pool, "k" + i);
        }
        eventually().until(() -> pool.stats().evictions(EvictionCause.SIZE) == 3);
        assertEquals(3, pool.stats().disposals());
        assertEquals(2, pool.stats().idle());
        engine.assertNoViolations();

        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertEquals(5, pool.stats().disposals());
        assertEquals(3, pool.stats().evictions(EvictionCause.SIZE), "objects disposed by close are not evictions");
    }

    @Test
    void withoutAnIdleCacheTheObjectIsDisposedAtZero() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        Session first;
        try (Attachment attached = pool.attach()) {
            try (Handle<Session> handle = pool.acquire("k")) {
                first = handle.get();
            }
            assertTrue(first.isDisposed());
            try (Handle<Session> handle = pool.acquire("k")) {
                assertFalse(handle.get() == first, "a new object");
            }
        }
        assertEquals(2, engine.factoryCalls.get());
        assertEquals(0, pool.stats().idleHits());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    /**
     * Revives on another thread are counted while it lives and after it ended: a thread that keeps
     * coming back counts its own (past its first few), and an ended thread's count is kept.
     */
    @Test
    void revivesOnOtherThreadsAreCountedWhileTheyLiveAndAfterTheyEnd() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(
                engine.builder().idle(cache -> cache.maximumSize(10).executor(Runnable::run)));
        pool.call("tenant-7", session -> session); // created, then idle
        CountDownLatch counted = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        Thread worker = new Thread(() -> {
            for (int i = 0; i < 1000; i++) {
                pool.call("tenant-7", session -> session);
            }
            counted.countDown();
            awaitLatch(end);
        });
        worker.start();
        assertTrue(counted.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertEquals(1000, pool.stats().idleHits(), "while the worker lives");
        assertEquals(1, pool.stats().idle());
        end.countDown();
        worker.join();
        for (int t = 0; t < 40; t++) { // threads that come and go: the ended ones are folded in
            Thread visitor = new Thread(() -> {
                for (int i = 0; i < 50; i++) {
                    pool.call("tenant-7", session -> session);
                }
            });
            visitor.start();
            visitor.join();
        }
        assertEquals(1000 + 40 * 50, pool.stats().idleHits(), "after the threads ended");
        assertEquals(1, pool.stats().idle());
        assertEquals(1, engine.factoryCalls.get());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
