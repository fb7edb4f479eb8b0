package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code GLOBAL} mode, {@code maxObjects(2)}, "b" held: a call creates "k" (its factory gives the
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
}
