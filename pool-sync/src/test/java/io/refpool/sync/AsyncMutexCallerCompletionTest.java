package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The caller's own completion methods on a waiting {@link AsyncMutex} acquire go through grant
 * versus cancel: on a waiting future they cancel the wait and the lock passes on; on a granted one
 * they leave the caller owning the lock. The lock is never lost or corrupted either way.
 */
class AsyncMutexCallerCompletionTest {
    /** A value a caller might force into the future; it owns nothing. */
    private static final Guard FOREIGN = () -> {};

    @Test
    void completeOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> completed = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        assertTrue(completed.complete(FOREIGN));

        assertSame(FOREIGN, completed.join());
        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void completeOnAGrantedFutureReturnsFalseAndKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        mutex.unlock();

        assertFalse(waiter.complete(FOREIGN));

        Guard guard = granted(waiter);
        assertNotSame(FOREIGN, guard);
        assertTrue(mutex.isLocked());
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void completeExceptionallyOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> failed = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());
        IllegalStateException failure = new IllegalStateException("given up");

        assertTrue(failed.completeExceptionally(failure));

        CompletionException thrown = assertThrows(CompletionException.class, failed::join);
        assertSame(failure, thrown.getCause());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void completeExceptionallyOnAGrantedFutureReturnsFalseAndKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        mutex.unlock();

        assertFalse(waiter.completeExceptionally(new IllegalStateException("too late")));

        Guard guard = granted(waiter);
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void obtrudeValueOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> obtruded = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        obtruded.obtrudeValue(FOREIGN);

        assertSame(FOREIGN, obtruded.join());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void obtrudeValueOnAGrantedFutureThrowsAndKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        mutex.unlock();

        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> waiter.obtrudeValue(FOREIGN));

        assertTrue(refused.getMessage().contains("AsyncMutex"), refused.getMessage());
        Guard guard = granted(waiter);
        assertNotSame(FOREIGN, guard);
        assertTrue(mutex.isLocked());
        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void obtrudeExceptionOnAGrantedFutureThrowsAndKeepsOwnership() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> waiter = waiting(mutex.acquire());
        mutex.unlock();

        assertThrows(IllegalStateException.class, () -> waiter.obtrudeException(new IllegalStateException("no")));

        granted(waiter).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void orTimeoutOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> timed = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        timed.orTimeout(1, TimeUnit.MILLISECONDS);
        eventually().until(timed::isDone);

        CompletionException thrown = assertThrows(CompletionException.class, timed::join);
        assertInstanceOf(TimeoutException.class, thrown.getCause());
        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void completeOnTimeoutOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> timed = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        timed.completeOnTimeout(FOREIGN, 1, TimeUnit.MILLISECONDS);
        eventually().until(timed::isDone);

        assertSame(FOREIGN, timed.join());
        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void completeAsyncOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> completed = waiting(mutex.acquire());
        CompletableFuture<Guard> next = waiting(mutex.acquire());

        completed.completeAsync(() -> FOREIGN, Runnable::run);

        assertSame(FOREIGN, completed.join());
        mutex.unlock();
        granted(next).close();
        assertFreeAndUsable(mutex);
    }
}
