package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A revive check that refuses an idle object while an acquireAsync of another key waits in line for
 * capacity: the guide says the request that revived the object "gets a new one", so the refused
 * object's permit makes that new object and never goes to the line.
 */
class RefusedReviveKeepsItsPermitTest {
    @Test
    void aRefusedReviveGetsANewObjectEvenWhileAnotherKeyWaitsInLine() throws Exception {
        Engine engine = new Engine();
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        AtomicBoolean refuse = new AtomicBoolean();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .maxObjects(2)
                .idle(cache -> cache.maximumSize(10))
                .validator((String key, Session s) -> {
                    if (refuse.get()) {
                        checking.countDown();
                        verdict.await();
                        return false;
                    }
                    return true;
                }));
        Handle<Session> a;
        try (Attachment attached = pool.attach()) {
            a = pool.acquire("a");
            pool.acquire("k").close(); // "k" idles, holding the second permit
        }
        refuse.set(true);
        Forked<Session> reviver = fork("reviver", () -> pool.call("k", s -> s));
        assertTrue(checking.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        CompletableFuture<Handle<Session>> x =
                pool.acquireAsync("x", io.refpool.sync.CancellationToken.none()).toCompletableFuture();
        eventually().until(() -> pool.stats().capacityWaiters() == 1); // in line: "k" is being checked, "a" is held
        verdict.countDown(); // the check refuses "k"

        Session fresh = reviver.join(); // not CapacityExhaustedException: the refused object's permit makes the new one
        assertNotSame(engine.created.get(1), fresh);
        assertEquals("k", fresh.key);

        assertTheLineIsServedAndNothingLost(engine, pool, x, a);
    }

    @Test
    void anObjectPastItsLifetimeAtReviveIsReplacedEvenWhileAnotherKeyWaitsInLine() throws Exception {
        Engine engine = new Engine();
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
        AtomicBoolean holdTheClock = new AtomicBoolean();
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch read = new CountDownLatch(1);
        RefPool<String, Session> pool = engine.build(engine.builder()
                .maxObjects(2)
                .idle(cache -> cache.maximumSize(10))
                .maxLifetime(java.time.Duration.ofSeconds(10))
                .ticker(() -> {
                    if (holdTheClock.compareAndSet(true, false)) { // the revive check's reading
                        reading.countDown();
                        try {
                            assertTrue(read.await(BOUND.toSeconds(), TimeUnit.SECONDS));
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                    }
                    return now.get();
                }));
        Handle<Session> a;
        try (Attachment attached = pool.attach()) {
            a = pool.acquire("a");
            pool.acquire("k").close(); // "k" idles, holding the second permit
        }
        Session old = engine.created.get(1);
        now.addAndGet(java.time.Duration.ofMinutes(1).toNanos()); // "k" is past its lifetime
        holdTheClock.set(true);
        Forked<Session> reviver = fork("reviver", () -> pool.call("k", s -> s));
        assertTrue(reading.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        CompletableFuture<Handle<Session>> x =
                pool.acquireAsync("x", io.refpool.sync.CancellationToken.none()).toCompletableFuture();
        eventually().until(() -> pool.stats().capacityWaiters() == 1);
        read.countDown(); // the check finds "k" too old

        Session fresh = reviver.join();
        assertNotSame(old, fresh);
        assertEquals("k", fresh.key);
        assertEquals(1, pool.stats().disposals(DisposalCause.LIFETIME));

        assertTheLineIsServedAndNothingLost(engine, pool, x, a);
    }

    /**
     * The call let go of the new "k" while "x" waited in line: the idle "k" is reclaimed for "x";
     * then every permit is free and every object disposed once.
     */
    private static void assertTheLineIsServedAndNothingLost(
            Engine engine, RefPool<String, Session> pool, CompletableFuture<Handle<Session>> x, Handle<Session> a)
            throws Exception {
        Handle<Session> served = x.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals("x", served.get().key);
        pool.runAttached(served::close);
        pool.runAttached(a::close);
        CapacityTest.assertAllPermitsFree(pool, 2);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
