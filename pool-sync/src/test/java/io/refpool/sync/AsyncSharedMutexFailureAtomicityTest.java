package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.granted;
import static io.refpool.sync.SharedMutexTesting.guardOf;
import static io.refpool.sync.SharedMutexTesting.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Failures leave {@link AsyncSharedMutex} as it was: a waiter that cannot be allocated, and a
 * release nobody holds, reach the caller as exceptions and change neither the state word nor the
 * queue. Bad input every primitive refuses alike is in {@link AcquireBadInputTest}.
 */
class AsyncSharedMutexFailureAtomicityTest {

    /** Stands in for an {@link OutOfMemoryError} at the waiter's allocation. */
    private static final class SimulatedAllocationFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        SimulatedAllocationFailure() {
            super("simulated: no memory for the waiter");
        }
    }

    /** A live token: its registration must not outlive a failed acquire either. */
    private final CancellationSource source = new CancellationSource();

    private List<Executable> contendedReaderAcquires(AsyncSharedMutex lock) {
        return List.of(
                lock::acquireShared,
                () -> lock.acquireShared(source.token()),
                lock::acquireSharedBlocking,
                () -> lock.acquireSharedBlocking(source.token()),
                () -> lock.tryAcquireShared(Duration.ofSeconds(30)));
    }

    private List<Executable> contendedWriterAcquires(AsyncSharedMutex lock) {
        return List.of(
                lock::acquire,
                () -> lock.acquire(source.token()),
                lock::acquireBlocking,
                () -> lock.acquireBlocking(source.token()),
                () -> lock.tryAcquire(Duration.ofSeconds(30)));
    }

    private void assertEveryAcquireFailsAndChangesNothing(AsyncSharedMutex lock, List<Executable> acquires) {
        SimulatedAllocationFailure failure = new SimulatedAllocationFailure();
        long stateBefore = state(lock);
        int queuedBefore = lock.queueLength();
        SyncTesting.queueOf(lock).setHooks(new FailingHooks(Point.WAITER_ALLOCATION, failure));
        try {
            for (Executable acquire : acquires) {
                assertSame(failure, assertThrows(SimulatedAllocationFailure.class, acquire));
                assertEquals(stateBefore, state(lock), "state word");
                assertEquals(queuedBefore, lock.queueLength(), "queue");
            }
        } finally {
            SyncTesting.queueOf(lock).setHooks(null);
        }
        source.cancel(); // nothing of the failed acquires may react
        assertEquals(stateBefore, state(lock), "state word after the token was cancelled");
        assertEquals(queuedBefore, lock.queueLength(), "queue after the token was cancelled");
    }

    @Test
    void readerWaiterAllocationFailureBehindAHoldingWriterChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());

        assertEveryAcquireFailsAndChangesNothing(lock, contendedReaderAcquires(lock));

        CompletionStage<Guard> reader = lock.acquireShared();
        lock.unlock();
        assertTrue(granted(reader), "the lock works on after the failures");
        guardOf(reader).close();
        assertFree(lock);
    }

    @Test
    void readerWaiterAllocationFailureBehindAWaitingWriterChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();

        assertEveryAcquireFailsAndChangesNothing(lock, contendedReaderAcquires(lock));

        lock.unlockShared();
        assertTrue(granted(writer));
        guardOf(writer).close();
        assertFree(lock);
    }

    @Test
    void writerWaiterAllocationFailureBehindReadersChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        assertTrue(lock.tryLockShared());

        assertEveryAcquireFailsAndChangesNothing(lock, contendedWriterAcquires(lock));

        assertTrue(lock.tryLockShared(), "no writer bit was left behind: readers still enter");
        for (int i = 0; i < 3; i++) {
            lock.unlockShared();
        }
        assertFree(lock);
    }

    @Test
    void writerWaiterAllocationFailureBehindAQueueChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        CompletionStage<Guard> reader = lock.acquireShared();

        assertEveryAcquireFailsAndChangesNothing(lock, contendedWriterAcquires(lock));

        lock.unlock();
        assertTrue(granted(reader));
        guardOf(reader).close();
        assertFree(lock);
    }

    @Test
    void unlockSharedWithNoReaderIsRefusedAndChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        IllegalStateException e = assertThrows(IllegalStateException.class, lock::unlockShared);
        assertTrue(e.getMessage().contains("AsyncSharedMutex"), e.getMessage());
        assertFree(lock);

        assertTrue(lock.tryLock());
        long before = state(lock);
        assertThrows(IllegalStateException.class, lock::unlockShared, "a writer holds, not a reader");
        assertEquals(before, state(lock));
        CompletionStage<Guard> queued = lock.acquireShared();
        long withQueue = state(lock);
        assertThrows(IllegalStateException.class, lock::unlockShared);
        assertEquals(withQueue, state(lock));
        assertEquals(1, lock.queueLength());

        lock.unlock();
        guardOf(queued).close();
        assertFree(lock);
    }

    @Test
    void unlockWithNoWriterIsRefusedAndChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        IllegalStateException e = assertThrows(IllegalStateException.class, lock::unlock);
        assertTrue(e.getMessage().contains("AsyncSharedMutex"), e.getMessage());
        assertFree(lock);

        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        long before = state(lock);
        assertThrows(IllegalStateException.class, lock::unlock, "a reader holds, not a writer");
        assertEquals(before, state(lock));
        assertEquals(1, lock.readers());
        assertEquals(1, lock.queueLength());

        lock.unlockShared();
        guardOf(writer).close();
        assertFree(lock);
    }

    @Test
    void secondUnlockSharedAfterTheLastReaderHandedOffIsRefusedAndChangesNothing() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        CompletionStage<Guard> laterReader = lock.acquireShared();
        lock.unlockShared();
        assertTrue(granted(writer));
        long handedOver = state(lock);

        assertThrows(IllegalStateException.class, lock::unlockShared);

        assertEquals(handedOver, state(lock));
        assertEquals(0, lock.readers());
        assertEquals(1, lock.queueLength());
        assertFalse(granted(laterReader));
        guardOf(writer).close();
        assertTrue(granted(laterReader));
        guardOf(laterReader).close();
        assertFree(lock);
    }
}
