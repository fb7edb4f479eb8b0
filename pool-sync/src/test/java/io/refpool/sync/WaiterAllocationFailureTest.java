package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.assertPermits;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The strong guarantee of a contended acquire: when the waiter cannot be allocated (modelled by
 * {@link FailingHooks} at {@code WAITER_ALLOCATION}), the failure reaches the caller and the lock's
 * state and queue are exactly as before; the waiters already queued are served as if nothing
 * happened.
 */
class WaiterAllocationFailureTest {
    private static final OutOfMemoryError NO_MEMORY = new OutOfMemoryError("modelled failure");

    @Test
    void asyncMutexAcquireReportsTheFailureAndChangesNothing() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> queued = waiting(mutex.acquire());
        IllegalStateException failure = new IllegalStateException("allocation failed");
        long stateBefore = SyncTesting.queueOf(mutex).state();
        SyncTesting.queueOf(mutex).setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));

        assertSame(failure, assertThrows(IllegalStateException.class, mutex::acquire));

        assertEquals(stateBefore, SyncTesting.queueOf(mutex).state(), "the state word, bit for bit");
        assertTrue(mutex.isLocked());
        assertEquals(1, mutex.queueLength());
        SyncTesting.queueOf(mutex).setHooks(null);
        mutex.unlock();
        granted(queued).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void blockingMutexAcquireReportsTheFailureAndChangesNothing() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> queued = waiting(mutex.acquire());
        IllegalStateException failure = new IllegalStateException("allocation failed");
        long stateBefore = SyncTesting.queueOf(mutex).state();
        SyncTesting.queueOf(mutex).setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));

        assertSame(failure, assertThrows(IllegalStateException.class, mutex::acquireBlocking));
        assertSame(failure, assertThrows(IllegalStateException.class, () -> mutex.tryAcquire(Duration.ofSeconds(1))));
        assertSame(
                failure,
                assertThrows(IllegalStateException.class, () -> mutex.acquireBlocking(CancellationToken.none())));

        assertEquals(stateBefore, SyncTesting.queueOf(mutex).state(), "the state word, bit for bit");
        assertTrue(mutex.isLocked());
        assertEquals(1, mutex.queueLength());
        SyncTesting.queueOf(mutex).setHooks(null);
        mutex.unlock();
        granted(queued).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void asyncSemaphoreAcquireReportsTheFailureAndChangesNothing() {
        AsyncSemaphore semaphore = new AsyncSemaphore(1, 3);
        CompletableFuture<Guard> queued = waiting(semaphore.acquire(2));
        IllegalStateException failure = new IllegalStateException("allocation failed");
        long stateBefore = SyncTesting.queueOf(semaphore).state();
        SyncTesting.queueOf(semaphore).setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));

        assertSame(failure, assertThrows(IllegalStateException.class, () -> semaphore.acquire(3)));
        assertSame(
                failure,
                assertThrows(IllegalStateException.class, () -> semaphore.acquire(1, CancellationToken.none())));

        assertEquals(stateBefore, SyncTesting.queueOf(semaphore).state(), "the state word, bit for bit");
        assertEquals(1, semaphore.availablePermits());
        assertEquals(1, semaphore.queueLength());
        SyncTesting.queueOf(semaphore).setHooks(null);
        semaphore.release(1);
        granted(queued).close();
        assertPermits(semaphore, 2);
        semaphore.release(1);
        assertPermits(semaphore, 3);
    }

    @Test
    void blockingSemaphoreAcquireReportsTheFailureAndChangesNothing() {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 2);
        CompletableFuture<Guard> queued = waiting(semaphore.acquire(1));
        IllegalStateException failure = new IllegalStateException("allocation failed");
        long stateBefore = SyncTesting.queueOf(semaphore).state();
        SyncTesting.queueOf(semaphore).setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));

        assertSame(failure, assertThrows(IllegalStateException.class, () -> semaphore.acquireBlocking(2)));
        assertSame(
                failure,
                assertThrows(IllegalStateException.class, () -> semaphore.tryAcquire(1, Duration.ofSeconds(1))));

        assertEquals(stateBefore, SyncTesting.queueOf(semaphore).state(), "the state word, bit for bit");
        assertEquals(0, semaphore.availablePermits());
        assertEquals(1, semaphore.queueLength());
        SyncTesting.queueOf(semaphore).setHooks(null);
        semaphore.release(2);
        granted(queued).close();
        assertPermits(semaphore, 2);
    }

    @Test
    void failedSemaphoreAcquireWithNobodyQueuedLeavesTheFreePermitsTakable() {
        AsyncSemaphore semaphore = new AsyncSemaphore(1, 3);
        IllegalStateException failure = new IllegalStateException("allocation failed");
        long stateBefore = SyncTesting.queueOf(semaphore).state();
        SyncTesting.queueOf(semaphore).setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));

        assertSame(failure, assertThrows(IllegalStateException.class, () -> semaphore.acquire(3)));

        assertEquals(stateBefore, SyncTesting.queueOf(semaphore).state(), "the state word, bit for bit");
        SyncTesting.queueOf(semaphore).setHooks(null);
        assertTrue(semaphore.tryAcquirePermits(1), "nobody waits, so the free permit can be taken");
        semaphore.release(1);
        assertPermits(semaphore, 1);
    }

    @Test
    void anErrorFromTheAllocationReachesTheCallerUnchanged() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        SyncTesting.queueOf(mutex).setHooks(p -> {
            if (p == Point.WAITER_ALLOCATION) {
                throw NO_MEMORY;
            }
        });

        long stateBefore = SyncTesting.queueOf(mutex).state();

        assertSame(NO_MEMORY, assertThrows(OutOfMemoryError.class, mutex::acquire));

        assertEquals(stateBefore, SyncTesting.queueOf(mutex).state(), "the state word, bit for bit");
        assertTrue(mutex.isLocked());
        assertEquals(0, mutex.queueLength());
        SyncTesting.queueOf(mutex).setHooks(null);
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }
}
