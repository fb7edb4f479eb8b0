package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.assertPermits;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Futures are settled through a per-thread trampoline: 100,000 waiters whose continuations release
 * and re-acquire synchronously run in a loop on the releasing thread, not as a 100,000-frame
 * recursion (the suite runs with a 1 MiB stack, where such a recursion overflows).
 */
class ContinuationStackSafetyTest {
    private static final int WAITERS = 100_000;

    @Test
    void hundredThousandChainedMutexContinuationsCompleteWithoutStackOverflow() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        int[] firstGrants = {0};
        int[] secondGrants = {0};
        for (int i = 0; i < WAITERS; i++) {
            mutex.acquire().thenAccept(guard -> {
                firstGrants[0]++;
                guard.close(); // hands the lock to the next waiter, whose continuation must not nest
                mutex.acquire()
                        .thenAccept(
                                again -> { // queues behind everyone: served in the second lap
                                    secondGrants[0]++;
                                    again.close();
                                });
            });
        }
        assertEquals(WAITERS, mutex.queueLength());

        mutex.unlock();

        assertEquals(WAITERS, firstGrants[0]);
        assertEquals(WAITERS, secondGrants[0]);
        assertFreeAndUsable(mutex);
    }

    @Test
    void hundredThousandChainedSemaphoreContinuationsCompleteWithoutStackOverflow() {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 2);
        int[] grants = {0};
        for (int i = 0; i < WAITERS; i++) {
            semaphore.acquire(2).thenAccept(guard -> {
                grants[0]++;
                guard.close();
                if (semaphore.tryAcquirePermits(1)) { // fails while anyone is queued
                    semaphore.release(1);
                }
            });
        }

        semaphore.release(2);

        assertEquals(WAITERS, grants[0]);
        assertPermits(semaphore, 2);
    }
}
