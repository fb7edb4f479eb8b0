package io.refpool.core;

import static io.refpool.core.TestKeyedPoolFixtures.awaitLatch;
import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Single flight: concurrent acquirers of a key under creation wait for that one factory call, and
 * share its result or its failure; nothing stays stuck after a failure.
 */
class SingleFlightCreationTest {
    private static final int THREADS = 16;

    /**
     * Starts {@link #THREADS} attached acquirers of {@code key}; returns once one of them is inside
     * the factory (held by the test) and all the others wait for that creation. Each keeps its
     * handle open until all have one, so the object cannot be disposed and created again meanwhile.
     */
    private static List<TestKit.Forked<Session>> acquirersWaitingForOneCreation(
            RefPool<String, Session> pool, String key, CountDownLatch inFactory) throws InterruptedException {
        List<TestKit.Forked<Session>> workers = new ArrayList<>();
        CountDownLatch allAcquired = new CountDownLatch(THREADS);
        for (int i = 0; i < THREADS; i++) {
            workers.add(fork("acquirer-" + i, () -> {
                try (Attachment attached = pool.attach();
                        Handle<Session> handle = pool.acquire(key)) {
                    allAcquired.countDown();
                    awaitLatch(allAcquired);
                    return handle.get();
                }
            }));
        }
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "no acquirer reached the factory");
        // the creator waits on the test's latch (timed), the 15 others on the creation: all parked
        eventually().until(() -> workers.stream().allMatch(w -> {
            Thread.State state = w.thread.getState();
            return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
        }));
        return workers;
    }

    @Test
    void sixteenAttachedAcquirersOfANewKeyShareOneFactoryCall() throws Exception {
        Engine engine = new Engine();
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            inFactory.countDown();
            awaitLatch(release);
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(AttachMode.SHARED));

        List<TestKit.Forked<Session>> workers = acquirersWaitingForOneCreation(pool, "tenant-7", inFactory);
        assertEquals(1, engine.factoryCalls.get());
        release.countDown();

        Session first = workers.get(0).join();
        for (TestKit.Forked<Session> worker : workers) {
            assertSame(first, worker.join(), "every acquirer gets the one object created");
        }
        assertEquals(1, engine.factoryCalls.get(), "one factory call for sixteen acquirers");
        assertEquals(1, pool.stats().creations());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aFailingCreationFailsEveryWaiterAndTheNextAcquireRetries() throws Exception {
        Engine engine = new Engine();
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        IllegalStateException engineDown = new IllegalStateException("the engine refused a session");
        engine.beforeCreate = key -> {
            inFactory.countDown();
            awaitLatch(release);
            if (engine.factoryCalls.get() == 1) {
                throw engineDown;
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(AttachMode.SHARED));

        List<TestKit.Forked<Session>> workers = acquirersWaitingForOneCreation(pool, "tenant-7", inFactory);
        release.countDown();

        for (TestKit.Forked<Session> worker : workers) {
            assertSame(engineDown, worker.joinFailure(), "every waiter gets the factory's exception");
        }
        assertEquals(1, engine.factoryCalls.get(), "the waiters did not call the factory again");
        assertEquals(1, engine.errors(PoolError.Kind.FACTORY_FAILED).size());
        assertSame(
                engineDown, engine.errors(PoolError.Kind.FACTORY_FAILED).get(0).cause());
        assertEquals(0, pool.stats().creations());

        try (Attachment attached = pool.attach();
                Handle<Session> handle = pool.acquire("tenant-7")) {
            assertEquals("tenant-7", handle.get().key, "the next acquire calls the factory again and succeeds");
        }
        assertEquals(2, engine.factoryCalls.get());
        assertEquals(1, pool.stats().creations());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void asyncAcquirersWaitForTheCreationInFlight() throws Exception {
        Engine engine = new Engine();
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            inFactory.countDown();
            awaitLatch(release);
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(AttachMode.SHARED));
        TestKit.Forked<Session> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Handle<Session> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        awaitLatch(inFactory);

        CompletableFuture<Handle<Session>> waiting =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        assertFalse(waiting.isDone(), "the async acquirer waits for the creation under way");
        release.countDown();

        Session created = creator.join();
        try (Handle<Session> handle = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS)) {
            assertSame(created, handle.get());
        }
        assertEquals(1, engine.factoryCalls.get());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void asyncAcquirersOfAFailingCreationGetItsException() throws Exception {
        Engine engine = new Engine();
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        IllegalStateException engineDown = new IllegalStateException("the engine refused a session");
        engine.beforeCreate = key -> {
            if (engine.factoryCalls.get() == 1) {
                inFactory.countDown();
                awaitLatch(release);
                throw engineDown;
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(AttachMode.SHARED));
        TestKit.Forked<Session> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Handle<Session> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        awaitLatch(inFactory);
        CompletableFuture<Handle<Session>> waiting =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        release.countDown();

        assertSame(engineDown, creator.joinFailure());
        ExecutionException failed =
                assertThrows(ExecutionException.class, () -> waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertSame(engineDown, failed.getCause(), "the async waiter shares the creation's failure");
        assertEquals(1, engine.factoryCalls.get(), "the async waiter did not call the factory itself");

        try (Handle<Session> handle = pool.acquireAsync("k", CancellationToken.none())
                .toCompletableFuture()
                .get(BOUND.toSeconds(), TimeUnit.SECONDS)) {
            assertEquals("k", handle.get().key, "a later acquire retries and succeeds");
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aFactoryAcquiringItsOwnKeyFailsInsteadOfWaitingForItself() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        engine.beforeCreate = key -> {
            if (key.equals("self")) {
                pool.acquire("self").close();
            }
        };
        try (Attachment attached = pool.attach()) {
            IllegalStateException failed = assertThrows(IllegalStateException.class, () -> pool.acquire("self"));
            assertTrue(failed.getMessage().contains("'self'"), failed.getMessage());
            assertInstanceOf(IllegalStateException.class, engine.errors.get(0).cause());
            engine.beforeCreate = key -> {};
            try (Handle<Session> handle = pool.acquire("self")) {
                assertEquals("self", handle.get().key);
            }
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
