package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An {@code acquireAsync} that waited for another thread's creation or revive check of its key
 * shares the object the wait ended with, at once, while it is live.
 *
 * <p>{@code GLOBAL} mode, {@code maxObjects(2)}, "b" held: a call creates "k" (its factory gives the
 * gate up), an {@code acquireAsync("k")} waits for that creation, and an {@code acquireAsync("c")}
 * waits in line for capacity. When "k" is published the request for it shares it: before, it went
 * back to the gate, behind the creator's call, whose release brought "k" to zero with "c" in line
 * and no request for "k" there, so "k" was disposed for "c" and made a third time later.
 */
class AsyncWaitersShareTheCreationTest {
    private final Engine engine = new Engine();

    /** The creator's call, the two requests, and what the request for "k" got. */
    private void requestForKSharesTheNewObject(
            RefPool<String, Session> pool, CountDownLatch creatorInside, Runnable letCreatorGoOn) throws Exception {
        Handle<Session> b = pool.attached(() -> pool.acquire("b"));
        Forked<Session> creator = fork("creator", () -> pool.call("k", session -> session));
        assertTrue(creatorInside.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the creator's factory or check runs");
        CompletableFuture<Handle<Session>> sameKey =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        CompletableFuture<Handle<Session>> otherKey =
                pool.acquireAsync("c", CancellationToken.none()).toCompletableFuture();
        letCreatorGoOn.run();
        Session fresh = creator.join();
        Handle<Session> shared = sameKey.get(BOUND.toSeconds(), TimeUnit.SECONDS); // before b goes
        assertSame(fresh, shared.get(), "the request for k shares the k its wait ended with: " + engine.created);
        pool.runAttached(shared::close);
        pool.runAttached(b::close);
        Handle<Session> c = otherKey.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        pool.runAttached(c::close);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anAsyncRequestWaitingForACreationSharesItsObject() throws Exception {
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch made = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            if (key.equals("k")) {
                creating.countDown();
                TestKeyedPoolFixtures.awaitLatch(made);
            }
        };
        RefPool<String, Session> pool = engine.build(
                engine.builder().attachMode(AttachMode.GLOBAL).maxObjects(2).idle(cache -> cache.maximumSize(10)));
        requestForKSharesTheNewObject(pool, creating, () -> {
            TestKit.eventually().until(() -> pool.stats().capacityWaiters() == 1); // "c" in line
            made.countDown();
        });
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
     * {@code SHARED}, the same two requests while a call's revive check of "k" runs, and a {@code
     * stopTheWorld()} queued behind that call: when the check passes the request for "k" shares the
     * checked object. Had it gone back through the gate, behind the stop, the checker's release could
     * bring "k" to zero with "c" in line and none for "k" there: "k" would be disposed for "c".
     */
    @Test
    void anAsyncRequestWaitingForAPassedChecksVerdictSharesTheObject() throws Exception {
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .attachMode(AttachMode.SHARED)
                .maxObjects(2)
                .idle(cache -> cache.maximumSize(10))
                .validator((String key, Session session) -> {
                    if (key.equals("k") && checks.incrementAndGet() == 1) {
                        checking.countDown();
                        TestKeyedPoolFixtures.awaitLatch(verdict);
                    }
                    return true; // the check passes
                }));
        pool.call("k", session -> session); // idle now: the next call revives it through the check
        Handle<Session> b = pool.attached(() -> pool.acquire("b")); // capacity full: k (idle) and b
        Forked<Session> checker = fork("checker", () -> pool.call("k", session -> session));
        assertTrue(checking.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the checker's revive check runs");

        // the request for k attempts at once (shared gate), finds k being checked: waits for the verdict
        CompletableFuture<Handle<Session>> sameKey =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        // the request for c finds no capacity: it waits in line
        CompletableFuture<Handle<Session>> otherKey =
                pool.acquireAsync("c", CancellationToken.none()).toCompletableFuture();
        eventually().until(() -> pool.stats().capacityWaiters() == 1);
        // a stop of the world queues behind the checker's shared hold
        Forked<Void> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return null;
            }
        });
        eventually().until(() -> waitsAtTheGate(stopper.thread)); // the stop of the world waits for the checker

        verdict.countDown(); // the check passes; the checker's call runs and returns
        Session fresh = checker.outcome.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        stopper.outcome.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        Handle<Session> shared;
        try {
            shared = sameKey.get(10, TimeUnit.SECONDS); // b still held: only sharing k can serve it
        } catch (TimeoutException stuck) {
            pool.runAttached(b::close); // let everything end
            fail("the request for k, which waited for k's passed check, was not served; k was disposed for c: "
                    + engine.disposed + ", created " + engine.created);
            return;
        }
        assertSame(fresh, shared.get(), "the request for k shares the k its check passed");
        pool.runAttached(shared::close);
        pool.runAttached(b::close);
        pool.runAttached(otherKey.get(BOUND.toSeconds(), TimeUnit.SECONDS)::close);
        pool.close();
        assertEquals(0, engine.violations.size(), engine.violations.toString());
    }
}
