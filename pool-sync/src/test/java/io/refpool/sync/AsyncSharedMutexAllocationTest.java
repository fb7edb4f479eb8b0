package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The uncontended paths of {@link AsyncSharedMutex} allocate nothing once the JIT compiled the
 * caller, measured with the thread's allocation counter.
 */
class AsyncSharedMutexAllocationTest {
    private static final int OPS = 200_000;

    @Test
    void tryLockSharedAndUnlockSharedAllocateNothing() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        double bytes = AllocationMeter.bytesPerOp(OPS, () -> {
            if (!lock.tryLockShared()) {
                throw new AssertionError("uncontended tryLockShared failed");
            }
            lock.unlockShared();
        });
        assertTrue(bytes < 1, "bytes/op " + bytes);
        assertFree(lock);
    }

    @Test
    void tryLockSharedAndUnlockSharedBesideAnotherReaderAllocateNothing() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        double bytes = AllocationMeter.bytesPerOp(OPS, () -> {
            if (!lock.tryLockShared()) {
                throw new AssertionError("uncontended tryLockShared failed");
            }
            lock.unlockShared();
        });
        assertTrue(bytes < 1, "bytes/op " + bytes);
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void blockingSharedAcquireAndCloseAllocateNothing() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        double bytes = AllocationMeter.bytesPerOp(OPS, () -> {
            try (Guard g = lock.acquireSharedBlocking()) {
                if (lock.readers() != 1) {
                    throw new AssertionError("expected one reader");
                }
            }
        });
        assertTrue(bytes < 1, "bytes/op " + bytes);
        assertFree(lock);
    }

    @Test
    void tryLockAndUnlockAllocateNothing() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        double bytes = AllocationMeter.bytesPerOp(OPS, () -> {
            if (!lock.tryLock()) {
                throw new AssertionError("uncontended tryLock failed");
            }
            lock.unlock();
        });
        assertTrue(bytes < 1, "bytes/op " + bytes);
        assertFree(lock);
    }

    @Test
    void blockingExclusiveAcquireAndCloseAllocateNothing() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        double bytes = AllocationMeter.bytesPerOp(OPS, () -> {
            try (Guard g = lock.acquireBlocking()) {
                if (!lock.isWriteLocked()) {
                    throw new AssertionError("expected the writer to hold");
                }
            }
        });
        assertTrue(bytes < 1, "bytes/op " + bytes);
        assertFree(lock);
    }
}
