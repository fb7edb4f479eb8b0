package io.refpool.core;

import static io.refpool.core.CapacityTest.failureOf;
import static io.refpool.core.TestKeyedPoolFixtures.awaitLatch;
import static io.refpool.core.TestKeyedPoolFixtures.onOtherThread;
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
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Close, in both attach modes: waiters for the gate and for capacity fail with
 * {@link PoolClosedException}; pending releases are applied and idle objects disposed before
 * {@code close()} returns; live objects are disposed as their last handles close afterwards, on or
 * off attachment; every object is disposed exactly once; close is idempotent.
 */
class PoolCloseTest {
    /** A pool whose drainer would only run after an hour, unless close makes it urgent. */
    private static RefPool<String, Session> pool(Engine engine, AttachMode mode) {
        return engine.build(engine.builder()
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(100))
                .drainDelay(Duration.ofHours(1)));
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeAppliesPendingReleasesDisposesIdleObjectsAndLeavesLiveOnesToTheirLastClose(AttachMode mode)
            throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, mode);
        Handle<Session> live;
        Handle<Session> pending;
        Handle<Session> lateAttached;
        try (Attachment attached = pool.attach()) {
            pool.acquire("idle-1").close();
            pool.acquire("idle-2").close();
            live = pool.acquire("live");
            pending = pool.acquire("pending");
            lateAttached = pool.acquire("late-attached");
        }
        onOtherThread(() -> {
            pending.close();
            return null;
        });
        assertEquals(1, pool.stats().pendingDecrements());
        assertEquals(2, pool.stats().idle());

        pool.close();

        assertEquals(0, pool.stats().pendingDecrements(), "no pending release is left once close returns");
        assertEquals(0, pool.stats().idle());
        assertEquals(2, pool.stats().live());
        assertEquals(3, engine.disposed.size(), "the idle objects and the one whose last release was pending");
        assertFalse(live.get().isDisposed());
        assertEquals(1, engine.errors(PoolError.Kind.HANDLES_OPEN_AT_CLOSE).size());

        Session liveSession = live.get();
        onOtherThread(() -> {
            live.close(); // off-attachment after close: the drainer runs at once, not after the delay
            return null;
        });
        eventually().until(liveSession::isDisposed);
        Session lateSession = lateAttached.get();
        onOtherThread(() -> {
            lateAttached.close();
            return null;
        });
        eventually().until(lateSession::isDisposed);
        assertEquals(0, pool.stats().live());
        engine.assertAllDisposedExactlyOnce();
        // the drainer counts a disposal once its disposer has returned, after the session's flag
        eventually().until(() -> pool.stats().disposals() == 5);

        pool.close(); // idempotent
        engine.assertAllDisposedExactlyOnce();
        assertTrue(pool.isClosed());
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeFailsEveryWaiterWithPoolClosedException(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> x;
        try (Attachment attached = pool.attach()) {
            x = pool.acquire("x");
        }
        CompletableFuture<Handle<Session>> capacityWaiter =
                pool.acquireAsync("y", CancellationToken.none()).toCompletableFuture();
        assertEquals(1, pool.stats().capacityWaiters());

        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        TestKit.Forked<Void> holder = fork("gate-holder", () -> {
            // exclusive() is attach() in GLOBAL mode; in SHARED mode it keeps attachers out
            try (Attachment attached = pool.stopTheWorld()) {
                holding.countDown();
                awaitLatch(letGo);
                x.close(); // attached: the pool is closing, so "x" is disposed now
            }
            return null;
        });
        awaitLatch(holding);
        TestKit.Forked<Void> gateWaiter = fork("gate-waiter", () -> {
            try (Attachment attached = pool.attach()) {
                return null;
            }
        });
        TestKit.awaitParked(gateWaiter.thread);
        CompletableFuture<String> asyncAttach =
                pool.attachAsync(CancellationToken.none(), attachment -> "ran").toCompletableFuture();
        CompletableFuture<Handle<Session>> gateWaitingAcquire =
                pool.acquireAsync("z", CancellationToken.none()).toCompletableFuture();
        assertFalse(asyncAttach.isDone() || gateWaitingAcquire.isDone());

        TestKit.Forked<Void> closer = fork("closer", () -> {
            pool.close();
            return null;
        });

        assertInstanceOf(PoolClosedException.class, gateWaiter.joinFailure());
        assertInstanceOf(PoolClosedException.class, failureOf(asyncAttach));
        assertInstanceOf(PoolClosedException.class, failureOf(gateWaitingAcquire));
        assertInstanceOf(PoolClosedException.class, failureOf(capacityWaiter));
        assertTrue(
                failureOf(capacityWaiter).getMessage().contains("'y'"),
                failureOf(capacityWaiter).getMessage());
        TestKit.awaitParked(closer.thread); // close itself waits for the holder to detach
        letGo.countDown();
        holder.join();
        closer.join();

        assertEquals(0, pool.stats().capacityWaiters());
        assertEquals(1, engine.factoryCalls.get(), "no waiter created anything");
        engine.assertAllDisposedExactlyOnce();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aSecondCloseWaitsForTheFirstToFinishUnlessItsThreadIsAttached(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, mode);
        Handle<Session> pending;
        Session pendingSession;
        try (Attachment attached = pool.attach()) {
            pool.acquire("idle").close();
            pending = pool.acquire("pending");
            pendingSession = pending.get();
        }
        onOtherThread(() -> {
            pending.close(); // off-attachment: a pending decrement
            return null;
        });
        Attachment held = pool.stopTheWorld(); // keeps the first close waiting for the gate

        TestKit.Forked<Void> first = fork("first-closer", () -> {
            pool.close();
            return null;
        });
        TestKit.awaitParked(first.thread);
        TestKit.Forked<Long> second = fork("second-closer", () -> {
            pool.close();
            return pool.stats().pendingDecrements() + pool.stats().idle();
        });
        TestKit.awaitParked(second.thread); // waits for the first close, does not return early

        pool.close(); // this thread is attached: waiting would wait for itself, so it returns at once
        assertFalse(pendingSession.isDisposed(), "the first close has not run yet");

        held.close();
        assertEquals(0L, second.join(), "when the second close returns, the first has drained and disposed");
        first.join();
        engine.assertAllDisposedExactlyOnce();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeWhileAttachedLetsTheCallerFinishAndDetach(AttachMode mode) {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, mode);
        try (Attachment attached = pool.attach()) {
            pool.acquire("idle").close();
            Handle<Session> live = pool.acquire("live");
            pool.close();
            assertEquals(1, engine.disposed.size());
            assertThrows(PoolClosedException.class, () -> pool.acquire("other"));
            assertSame(live.get(), engine.created.get(1));
            live.close(); // attached: disposed now
            assertEquals(2, engine.disposed.size());
        }
        engine.assertAllDisposedExactlyOnce();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeWaitsForACreationInFlightAndItsObjectIsDisposedOnce(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            inFactory.countDown();
            awaitLatch(finish);
        };
        RefPool<String, Session> pool = pool(engine, mode);
        TestKit.Forked<Handle<Session>> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach()) {
                return pool.acquire("k");
            }
        });
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        TestKit.Forked<Void> closer = fork("closer", () -> {
            pool.close();
            return null;
        });
        TestKit.awaitParked(closer.thread);
        finish.countDown();
        Handle<Session> created = creator.join();
        closer.join();
        assertFalse(created.get().isDisposed(), "still held");
        created.close(); // off-attachment, after close
        engine.awaitAllDisposedExactlyOnce();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachGrantedTheGateJustBeforeCloseIsLeftDetachedWhenItFails(AttachMode mode) throws Exception {
        int closedAfterGrant = 0;
        for (int round = 0; round < 20; round++) {
            Engine engine = new Engine();
            RefPool<String, Session> pool = engine.build(engine.builder().attachMode(mode));
            Attachment holder = pool.stopTheWorld(); // attach() in GLOBAL mode
            TestKit.Forked<Boolean> waiter = fork("waiter", () -> {
                try {
                    pool.attach().close();
                    return false;
                } catch (PoolClosedException closed) {
                    assertFalse(pool.isAttached(), "attach() threw, yet left this thread attached");
                    return true;
                }
            });
            TestKit.awaitParked(waiter.thread); // in line for the gate
            // hands the gate to the waiter, which wakes up while close (on this thread) begins:
            // the waiter's grant beats close's cancellation, and it then finds the pool closing
            holder.close();
            pool.close();
            if (waiter.join()) {
                closedAfterGrant++;
            }
        }
        assertTrue(closedAfterGrant > 0, "the waiter never found the pool closed after its grant");
    }
}
