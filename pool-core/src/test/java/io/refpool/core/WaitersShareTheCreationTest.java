package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An acquire that waited for another thread's creation or revive check of its key shares the
 * object the wait ended with, while it is live: an {@code acquireAsync}, and an attached {@code
 * acquire}, whose reference is taken when the creation ends, before it has the gate again.
 *
 * <p>{@code maxObjects(2)}, "b" held, a call making or reviving "k", a request for "k" waiting for
 * that, and a request for "c" in line for capacity. Had the request for "k" not shared the object,
 * the creator's release could bring "k" to zero with "c" in line and nobody for "k" there: "k" is
 * disposed for "c", and the request for "k" waits for "b" or fails for capacity.
 */
class WaitersShareTheCreationTest {
    private final Engine engine = new Engine();
    private final CountDownLatch inside = new CountDownLatch(1);
    private final CountDownLatch goOn = new CountDownLatch(1);

    /** A {@code GLOBAL} pool whose factory for "k" waits: {@link #inside} reached, {@link #goOn} awaited. */
    private RefPool<String, Session> poolWhoseFactoryOfKWaits() {
        engine.beforeCreate = key -> {
            if (key.equals("k")) {
                inside.countDown();
                TestKeyedPoolFixtures.awaitLatch(goOn);
            }
        };
        return engine.build(
                engine.builder().attachMode(AttachMode.GLOBAL).maxObjects(2).idle(cache -> cache.maximumSize(10)));
    }

    /** A pool whose validator waits likewise at its first check of "k", which it passes or refuses. */
    private RefPool<String, Session> poolWhoseCheckOfKWaits(AttachMode mode, boolean passes) {
        AtomicInteger checks = new AtomicInteger();
        return engine.build(engine.builder()
                .attachMode(mode)
                .maxObjects(2)
                .idle(cache -> cache.maximumSize(10))
                .validator((String key, Session session) -> {
                    if (key.equals("k") && checks.incrementAndGet() == 1) {
                        inside.countDown();
                        TestKeyedPoolFixtures.awaitLatch(goOn);
                        return passes;
                    }
                    return true;
                }));
    }

    private Forked<Session> callOfKStopped(RefPool<String, Session> pool) throws InterruptedException {
        Forked<Session> caller = fork("caller", () -> pool.call("k", session -> session));
        assertTrue(inside.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the call's factory or check runs");
        return caller;
    }

    private static CompletableFuture<Handle<Session>> request(RefPool<String, Session> pool, String key) {
        return pool.acquireAsync(key, CancellationToken.none()).toCompletableFuture();
    }

    /** The request for "k" got {@code fresh} while "b" is held; then everything ends, nothing lost. */
    private void sharedThenAllEnds(
            RefPool<String, Session> pool,
            Session fresh,
            CompletableFuture<Handle<Session>> sameKey,
            Handle<Session> b,
            CompletableFuture<Handle<Session>> otherKey)
            throws Exception {
        Handle<Session> shared;
        try {
            shared = sameKey.get(10, TimeUnit.SECONDS); // b still held: only sharing k can serve it
        } catch (TimeoutException stuck) {
            pool.runAttached(b::close); // let everything end
            fail("the request for k was not served; k was disposed for c: disposed " + engine.disposed + ", created "
                    + engine.created);
            return;
        }
        assertSame(fresh, shared.get(), "the request for k shares the k its wait ended with: " + engine.created);
        pool.runAttached(shared::close);
        pool.runAttached(b::close);
        pool.runAttached(otherKey.get(BOUND.toSeconds(), TimeUnit.SECONDS)::close);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anAsyncRequestWaitingForACreationSharesItsObject() throws Exception {
        RefPool<String, Session> pool = poolWhoseFactoryOfKWaits();
        Handle<Session> b = pool.attached(() -> pool.acquire("b"));
        Forked<Session> creator = callOfKStopped(pool); // its factory gives the gate up
        CompletableFuture<Handle<Session>> sameKey = request(pool, "k");
        CompletableFuture<Handle<Session>> otherKey = request(pool, "c");
        eventually().until(() -> pool.stats().capacityWaiters() == 1); // "c" in line
        goOn.countDown();
        sharedThenAllEnds(pool, creator.join(), sameKey, b, otherKey);
    }

    /**
     * An attached {@code acquire("k")} waits, detached, for the creation; its reference was taken
     * once it had the gate again, behind the creator's call, and it failed for capacity.
     */
    @Test
    void anAttachedAcquireWaitingForACreationSharesItsObject() throws Exception {
        RefPool<String, Session> pool = poolWhoseFactoryOfKWaits();
        Handle<Session> b = pool.attached(() -> pool.acquire("b"));
        Forked<Session> creator = callOfKStopped(pool);
        Forked<Handle<Session>> waiter = fork("waiter", () -> pool.attached(() -> pool.acquire("k")));
        eventually().until(() -> waiter.thread.getState() == Thread.State.WAITING); // for the creation
        CompletableFuture<Handle<Session>> otherKey = request(pool, "c");
        eventually().until(() -> pool.stats().capacityWaiters() == 1);
        goOn.countDown();
        Session fresh = creator.join();
        sharedThenAllEnds(pool, fresh, waiter.outcome, b, otherKey);
    }

    /**
     * After a revive check that refused "k"'s idle object: the requests for "k" and "c" wait at
     * the gate while the check keeps it; the factory of the new "k" gives it up, and the request for
     * "k" finds that creation. Its wait for it must be set up while it holds the gate: the gate it
     * leaves grants "c" on the same thread before its own attempt's stage completes, and "c", held
     * once in line, lets the creator's whole call run meanwhile.
     */
    @Test
    void anAsyncRequestWaitingForARefusedChecksVerdictSharesTheNewObject() throws Exception {
        RefPool<String, Session> pool = poolWhoseCheckOfKWaits(AttachMode.GLOBAL, false);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        pool.call("k", session -> session); // idle now: the next call revives it through the check
        Handle<Session> b = pool.attached(() -> pool.acquire("b"));
        Forked<Session> checker = callOfKStopped(pool);
        CompletableFuture<Handle<Session>> sameKey = request(pool, "k");
        TestPoolHooks.Pause cInLine = hooks.pause(Point.CAPACITY_QUEUED, null); // on the thread the gate grants it
        CompletableFuture<Handle<Session>> otherKey = request(pool, "c");
        goOn.countDown();
        cInLine.awaitArrival();
        Session fresh = checker.join(); // its release of the new k came while c was in line
        cInLine.proceed();
        sharedThenAllEnds(pool, fresh, sameKey, b, otherKey);
    }

    private static boolean waitsAtTheGate(Thread t) {
        if (t.getState() != Thread.State.WAITING) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().endsWith("Gate$Shared") && e.getMethodName().equals("enterBlocking")) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code SHARED}, the two requests while a call's revive check of "k" runs, and a {@code
     * stopTheWorld()} queued behind that call: when the check passes the request for "k" shares the
     * checked object, rather than going back through the gate, behind the stop.
     */
    @Test
    void anAsyncRequestWaitingForAPassedChecksVerdictSharesTheObject() throws Exception {
        RefPool<String, Session> pool = poolWhoseCheckOfKWaits(AttachMode.SHARED, true);
        pool.call("k", session -> session); // idle now: the next call revives it through the check
        Handle<Session> b = pool.attached(() -> pool.acquire("b")); // capacity full: k (idle) and b
        Forked<Session> checker = callOfKStopped(pool);
        // the request for k attempts at once (shared gate), finds k being checked: waits for the verdict
        CompletableFuture<Handle<Session>> sameKey = request(pool, "k");
        CompletableFuture<Handle<Session>> otherKey = request(pool, "c"); // no capacity: in line
        eventually().until(() -> pool.stats().capacityWaiters() == 1);
        Forked<Void> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return null;
            }
        });
        eventually().until(() -> waitsAtTheGate(stopper.thread)); // the stop of the world waits for the checker

        goOn.countDown(); // the check passes; the checker's call runs and returns
        Session fresh = checker.outcome.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        stopper.outcome.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        sharedThenAllEnds(pool, fresh, sameKey, b, otherKey);
    }
}
