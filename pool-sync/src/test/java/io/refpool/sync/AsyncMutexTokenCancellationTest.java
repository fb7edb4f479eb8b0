package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.awaitQueued;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Cancelling an {@link AsyncMutex} wait through a {@link CancellationToken}: the wait ends with a
 * {@link CancellationException} and nothing owned, or — if the grant won — the caller owns the lock;
 * either way the lock passes on. Includes the token firing before publication, after the waiter was
 * popped for a grant, after the grant, and a 1,000-round race against the release.
 */
class AsyncMutexTokenCancellationTest {
    private static final int ROUNDS = 1_000;

    /** A wait ended by the token reads as cancelled, whether it was queued first or not. */
    private static void assertCancelledByToken(CompletableFuture<Guard> future) {
        assertTrue(future.isCancelled(), () -> "expected a cancelled acquire, was " + future);
        assertThrows(CancellationException.class, future::join);
    }

    @Test
    void tokenCancelOfAQueuedWaiterFailsItWithCancellationAndTheNextIsGranted() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> cancelled = waiting(mutex.acquire(source.token()));
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        assertTrue(source.cancel());

        assertCancelledByToken(cancelled);
        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void alreadyCancelledTokenFailsAtOnceAndQueuesNothing() {
        AsyncMutex mutex = new AsyncMutex();
        CancellationSource source = new CancellationSource();
        source.cancel();

        CompletableFuture<Guard> async = mutex.acquire(source.token()).toCompletableFuture();

        assertCancelledByToken(async);
        assertThrows(CancellationException.class, () -> mutex.acquireBlocking(source.token()));
        assertFreeAndUsable(mutex);
    }

    @Test
    void tokenCancelWakesABlockedWaiterWithCancellationException() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CancellationSource source = new CancellationSource();
        TestKit.Forked<Guard> blocked = fork("blocked", () -> mutex.acquireBlocking(source.token()));
        awaitQueued(mutex, 1);

        source.cancel();

        Throwable failure = blocked.joinFailure();
        assertInstanceOf(CancellationException.class, failure);
        assertTrue(failure.getMessage().contains("AsyncMutex"), failure.getMessage());
        assertEquals(0, mutex.queueLength());
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    /**
     * A blocked thread can wake spuriously at any time (a third thread unparks it here, over and
     * over) and see its wait cancelled by the token before the canceller has written the cause:
     * it must still report a {@link CancellationException}, never another exception.
     */
    @Test
    void spuriouslyWokenBlockedWaiterCancelledByTheTokenThrowsCancellationException() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        java.util.concurrent.atomic.AtomicReference<Thread> blockedThread =
                new java.util.concurrent.atomic.AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        TestKit.Forked<Void> waker = TestKit.forkRun("waker", () -> {
            while (!stop.get()) {
                Thread t = blockedThread.get();
                if (t != null) {
                    java.util.concurrent.locks.LockSupport.unpark(t);
                }
            }
        });
        try {
            for (int round = 0; round < ROUNDS; round++) {
                CancellationSource source = new CancellationSource();
                TestKit.Forked<Guard> blocked = fork("blocked", () -> mutex.acquireBlocking(source.token()));
                blockedThread.set(blocked.thread);
                awaitQueued(mutex, 1);
                source.cancel();
                Throwable failure = blocked.joinFailure();
                assertInstanceOf(CancellationException.class, failure, "round " + round);
                assertTrue(failure.getMessage().contains("AsyncMutex"), failure.getMessage());
            }
        } finally {
            stop.set(true);
            waker.join();
        }
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    @Test
    void tokenFiringBeforePublicationQueuesNothing() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CancellationSource source = new CancellationSource();
        PausingHooks paused = new PausingHooks(Point.AFTER_WAITER_ALLOCATED);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<CompletionStage<Guard>> acquirer = fork("acquirer", () -> mutex.acquire(source.token()));
        paused.awaitArrival(); // registration not made yet: it is, right after this point

        source.cancel();
        paused.proceed();

        assertCancelledByToken(acquirer.join().toCompletableFuture());
        assertEquals(0, mutex.queueLength());
        assertTrue(mutex.isLocked());
        SyncTesting.queueOf(mutex).setHooks(null);
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    @Test
    void tokenCancelWinsOverAPoppedGrantAndTheLockPassesOn() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> popped = waiting(mutex.acquire(source.token()));
        CompletableFuture<Guard> next = waiting(mutex.acquire());
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            mutex.unlock();
            return null;
        });
        paused.awaitArrival();

        source.cancel();
        paused.proceed();
        releaser.join();

        assertCancelledByToken(popped);
        granted(next).close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void tokenCancelAfterTheGrantKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> waiter = waiting(mutex.acquire(source.token()));
        mutex.unlock();
        Guard guard = granted(waiter);

        source.cancel();

        assertFalse(waiter.isCompletedExceptionally());
        assertTrue(mutex.isLocked());
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void tokenCancelRacingTheGrantEndsOwnedOrCancelled() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            for (int round = 0; round < ROUNDS; round++) {
                assertTrue(mutex.tryLock());
                CancellationSource source = new CancellationSource();
                CompletableFuture<Guard> waiter = waiting(mutex.acquire(source.token()));
                AtomicBoolean cancelled = new AtomicBoolean();
                racer.race(mutex::unlock, () -> cancelled.set(source.cancel()), round % 64 - 32);
                String where = "round " + round + ": ";
                assertTrue(cancelled.get(), where + "the source was cancelled by this call");
                assertTrue(waiter.isDone(), where + "settled");
                if (mutex.isLocked()) {
                    owned++;
                    granted(waiter).close();
                } else {
                    assertCancelledByToken(waiter);
                }
                assertFalse(mutex.isLocked(), where + "the lock ends free");
                assertEquals(0, mutex.queueLength(), where + "the queue ends empty");
            }
        }
        SyncTesting.assertBothOutcomes("token", owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }

    @Test
    void tokenCancelRacingTheGrantOfABlockingWaiterEndsOwnedOrCancellationException() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            for (int round = 0; round < ROUNDS; round++) {
                assertTrue(mutex.tryLock());
                CancellationSource source = new CancellationSource();
                TestKit.Forked<Guard> blocked = fork("blocked", () -> mutex.acquireBlocking(source.token()));
                awaitQueued(mutex, 1);
                racer.race(mutex::unlock, source::cancel, round % 64 - 32);
                String where = "round " + round + ": ";
                Guard guard;
                try {
                    guard = blocked.join();
                } catch (CancellationException e) {
                    guard = null;
                }
                if (guard != null) {
                    owned++;
                    assertTrue(mutex.isLocked(), where + "a returned guard owns the lock");
                    guard.close();
                }
                assertFalse(mutex.isLocked(), where + "the lock ends free");
                assertEquals(0, mutex.queueLength(), where + "the queue ends empty");
            }
        }
        SyncTesting.assertBothOutcomes("token, blocking", owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }
}
