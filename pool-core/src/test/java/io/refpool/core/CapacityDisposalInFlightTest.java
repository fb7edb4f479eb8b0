package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.unstarted;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.testkit.TestKit.Forked;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An idle object claimed for disposal by another thread still holds its permit until its disposer
 * returns. An attached acquire that needs that permit meanwhile finds nothing in use and nothing
 * idle to reclaim: it must not refuse for capacity, since the permit is on its way back.
 */
class CapacityDisposalInFlightTest {
    @Test
    void anAttachedAcquireWhileAnotherThreadDisposesTheOnlyIdleObjectGetsItsPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(
                engine.builder().attachMode(AttachMode.SHARED).maxObjects(1).idle(cache -> cache.maximumSize(10)));
        pool.runAttached(() -> pool.acquire("a").close()); // "a" idle, holding the one permit

        CountDownLatch inDisposer = new CountDownLatch(1);
        CountDownLatch disposerMayReturn = new CountDownLatch(1);
        holdDisposerOf("a", engine, inDisposer, disposerMayReturn);
        // another attached thread claims "a" (as a drainer applying its expiry would) and is held in its disposer
        Forked<Void> disposer = unstartedRun("disposer", pool::clearIdle);
        disposer.start();
        assertTrue(inDisposer.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the disposer of a runs");

        Forked<Handle<Session>> acquirer = unstarted("acquirer", () -> pool.attached(() -> pool.acquire("b")));
        acquirer.start();
        eventually() // nothing in use: it waits for the permit "a" still holds
                .until(() -> acquirer.outcome.isDone() || acquirer.thread.getState() == Thread.State.WAITING);
        disposerMayReturn.countDown();
        disposer.join();
        Handle<Session> b = acquirer.join();

        assertEquals("b", b.get().key);
        assertEquals(List.of("a", "b"), engine.created.stream().map(s -> s.key).toList());
        pool.runAttached(b::close);
        CapacityTest.assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertTrue(engine.violations.isEmpty(), engine.violations::toString);
    }

    @Test
    void anAttachedAcquireWhileAnotherThreadAppliesTheEvictionOfAnIdleObjectGetsItsPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .attachMode(AttachMode.SHARED)
                .maxObjects(2)
                .drainDelay(java.time.Duration.ofDays(1)) // only the threads of this test apply what is queued
                .idle(cache -> cache.maximumSize(0)));
        Handle<Session> held = pool.attached(() -> pool.acquire("held")); // one permit in use throughout

        CountDownLatch inDisposer = new CountDownLatch(1);
        CountDownLatch disposerMayReturn = new CountDownLatch(1);
        holdDisposerOf("a", engine, inDisposer, disposerMayReturn);
        // another thread idles "a", which the cache evicts at once, and applies that queued eviction as
        // it detaches, as the drainer would: it is held in the disposer of "a"
        Forked<Void> drainer = unstartedRun(
                "drainer", () -> pool.runAttached(() -> pool.acquire("a").close()));
        drainer.start();
        assertTrue(inDisposer.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the disposer of a runs");

        Forked<Handle<Session>> acquirer = unstarted("acquirer", () -> pool.attached(() -> pool.acquire("b")));
        acquirer.start();
        eventually().until(() -> acquirer.outcome.isDone() || acquirer.thread.getState() == Thread.State.WAITING);
        disposerMayReturn.countDown();
        drainer.join();
        Handle<Session> b = acquirer.join();

        assertEquals("b", b.get().key);
        pool.runAttached(() -> {
            b.close();
            held.close();
        });
        pool.flush();
        CapacityTest.assertAllPermitsFree(pool, 2);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertTrue(engine.violations.isEmpty(), engine.violations::toString);
    }

    /** Holds the disposer of {@code key}'s object until {@code mayReturn} opens; {@code entered} opens first. */
    private static void holdDisposerOf(String key, Engine engine, CountDownLatch entered, CountDownLatch mayReturn) {
        engine.afterDispose = session -> {
            if (session.key.equals(key)) {
                entered.countDown();
                try {
                    mayReturn.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }
}
