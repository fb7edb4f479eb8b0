package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.awaitQueued;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.notGranted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A cancelled wait on {@link AsyncMutex} owns nothing and never costs the lock: the next waiter is
 * granted, or the lock is freed. Covers cancel of a queued waiter, of a waiter already popped for a
 * grant (the releaser paused at {@code BETWEEN_POP_AND_COMPLETION}), and cancel after the grant.
 */
class AsyncMutexCancellationTest {
    @Test
    void cancelledQueuedWaiterIsSkippedAndTheNextOneGranted() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> cancelled = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        assertTrue(cancelled.cancel(true));
        assertEquals(1, mutex.queueLength(), "the cancelled waiter left the queue at once");
        mutex.unlock();

        assertTrue(cancelled.isCancelled());
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancellingTheOnlyWaiterThenReleasingFreesTheLock() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> cancelled = waiting(mutex.acquire());

        assertTrue(cancelled.cancel(true));
        mutex.unlock();

        assertFreeAndUsable(mutex);
    }

    @Test
    void cancellingAWaiterInTheMiddleKeepsTheOthersInOrder() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> first = waiting(mutex.acquire());
        CompletableFuture<Guard> middle = waiting(mutex.acquire());
        CompletableFuture<Guard> last = waiting(mutex.acquire());

        assertTrue(middle.cancel(false));
        mutex.unlock();

        Guard firstGuard = granted(first);
        assertFalse(last.isDone());
        firstGuard.close();
        granted(last).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancelWinsOverAPoppedGrantAndTheLockPassesToTheNextWaiter() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> popped = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            mutex.unlock();
            return null;
        });
        paused.awaitArrival(); // the head is popped and assigned the lock, not yet granted

        assertTrue(popped.cancel(true), "the cancel decides the popped waiter before the grant");
        paused.proceed();
        releaser.join();

        assertTrue(popped.isCancelled());
        assertTrue(mutex.isLocked());
        granted(next).close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancelWinsOverAPoppedGrantAndTheLockIsFreedWhenNobodyElseWaits() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> popped = waiting(mutex.acquire());
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            mutex.unlock();
            return null;
        });
        paused.awaitArrival();

        assertTrue(popped.cancel(true));
        assertFalse(mutex.isLocked(), "the cancel hands the popped waiter's ownership back before it returns");
        paused.proceed();
        releaser.join();

        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void interruptOfAPoppedBlockingWaiterPassesTheLockOn() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        TestKit.Forked<Guard> blocked = fork("blocked", mutex::acquireBlocking);
        awaitQueued(mutex, 1);
        CompletableFuture<Guard> next = waiting(mutex.acquire());
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            mutex.unlock();
            return null;
        });
        paused.awaitArrival();

        blocked.thread.interrupt();
        assertInstanceOf(InterruptedException.class, blocked.joinFailure());
        paused.proceed();
        releaser.join();

        granted(next).close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void timeoutOfAPoppedBlockingWaiterPassesTheLockOn() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> mutex.tryAcquire(Duration.ofMillis(200)));
        awaitQueued(mutex, 1);
        CompletableFuture<Guard> next = waiting(mutex.acquire());
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            mutex.unlock();
            return null;
        });
        paused.awaitArrival(); // popped; its deadline passes while the releaser is paused

        assertEquals(Optional.empty(), timed.join());
        paused.proceed();
        releaser.join();

        granted(next).close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancelAfterTheGrantReturnsFalseAndKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        mutex.unlock();

        assertFalse(waiter.cancel(true));

        assertFalse(waiter.isCancelled());
        Guard guard = granted(waiter);
        assertTrue(mutex.isLocked());
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancelOfAnUncontendedAcquireReturnsFalseAndKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        CompletableFuture<Guard> acquired = mutex.acquire().toCompletableFuture();

        assertFalse(acquired.cancel(true));

        Guard guard = granted(acquired);
        assertTrue(mutex.isLocked());
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void interruptedBlockingWaiterLeavesTheQueueAndOwnsNothing() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        TestKit.Forked<Guard> blocked = fork("blocked", mutex::acquireBlocking);
        awaitQueued(mutex, 1);

        blocked.thread.interrupt();

        assertInstanceOf(InterruptedException.class, blocked.joinFailure());
        assertEquals(0, mutex.queueLength());
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    @Test
    void timedOutWaiterLeavesTheQueueAndOwnsNothing() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> mutex.tryAcquire(Duration.ofMillis(50)));
        awaitQueued(mutex, 1);
        CompletableFuture<Guard> behind = waiting(mutex.acquire());

        assertEquals(Optional.empty(), timed.join());

        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        granted(behind).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void interruptBeforeBlockingAcquireThrowsAndTakesNothing() {
        AsyncMutex mutex = new AsyncMutex();
        Thread.currentThread().interrupt();

        assertThrows(InterruptedException.class, mutex::acquireBlocking);

        assertFalse(Thread.interrupted());
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancelledFutureReportsCancellationToItsDependents() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        CompletableFuture<String> dependent = waiter.thenApply(guard -> "owned");

        assertTrue(waiter.cancel(false));

        assertTrue(dependent.isCompletedExceptionally());
        assertThrows(CancellationException.class, waiter::join);
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancellingADependentStageDoesNotCancelTheWait() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        CompletableFuture<Guard> dependent = waiter.thenApply(guard -> guard);

        assertTrue(dependent.cancel(true));
        mutex.unlock();

        Guard guard = granted(waiter);
        assertTrue(mutex.isLocked(), "the wait itself was never cancelled, so it owns the lock");
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void closingAGrantedGuardTwiceReleasesOnce() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> first = waiting(mutex.acquire());
        CompletableFuture<Guard> second = waiting(mutex.acquire());
        mutex.unlock();
        Guard guard = granted(first);

        guard.close();
        guard.close(); // must not release the second waiter's ownership

        Guard secondGuard = granted(second);
        assertTrue(mutex.isLocked());
        assertSame(secondGuard, second.join());
        secondGuard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void cancelledFutureNeverCompletesWithAGuardLater() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        assertTrue(waiter.cancel(true));
        mutex.unlock();
        eventually().until(() -> !mutex.isLocked());

        notGranted(waiter);
        assertTrue(waiter.isCancelled());
        assertFreeAndUsable(mutex);
    }
}
