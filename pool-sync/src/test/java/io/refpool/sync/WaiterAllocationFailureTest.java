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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The strong guarantee of a contended acquire: when the waiter cannot be allocated (modelled by
 * {@link FailingHooks} at {@code WAITER_ALLOCATION}), the failure reaches the caller and the lock's
 * state and queue are exactly as before, for every primitive and every way to wait; the waiters
 * already queued are served as if nothing happened.
 */
class WaiterAllocationFailureTest {
    private static final OutOfMemoryError NO_MEMORY = new OutOfMemoryError("modelled failure");

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void everyContendedAcquireReportsTheFailureAndChangesNothing(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> queued = waiting(lock.acquire());
        IllegalStateException failure = new IllegalStateException("allocation failed");
        CancellationSource source = new CancellationSource();
        long stateBefore = lock.queue().state();
        lock.queue().setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));

        List<Executable> acquires = List.of(
                lock::acquire,
                () -> lock.acquire(CancellationToken.none()),
                () -> lock.acquire(source.token()),
                lock::acquireBlocking,
                () -> lock.acquireBlocking(source.token()),
                () -> lock.tryAcquire(Duration.ofSeconds(1)));
        for (Executable acquire : acquires) {
            assertSame(failure, assertThrows(IllegalStateException.class, acquire));
            assertEquals(stateBefore, lock.queue().state(), "the state word, bit for bit");
            assertEquals(1, lock.queueLength());
        }

        lock.queue().setHooks(null);
        source.cancel(); // nothing of the failed acquires may react
        assertEquals(stateBefore, lock.queue().state(), "the state word after the token was cancelled");
        lock.release();
        granted(queued).close();
        lock.assertFreeAndUsable();
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
