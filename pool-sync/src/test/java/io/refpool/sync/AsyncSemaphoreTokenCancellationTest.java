package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertPermits;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Cancelling an {@link AsyncSemaphore} request through a {@link CancellationToken} costs no permit:
 * a cancelled large head admits the smaller requests behind it at once, and a token racing the
 * release leaves the available permits exact.
 */
class AsyncSemaphoreTokenCancellationTest {
    private static final int ROUNDS = 1_000;

    @Test
    void tokenCancelOfTheLargeHeadAdmitsTheSmallerRequestsAtOnce() {
        AsyncSemaphore semaphore = new AsyncSemaphore(2, 4);
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> large = waiting(semaphore.acquire(4, source.token()));
        CompletableFuture<Guard> small1 = waiting(semaphore.acquire(1));
        CompletableFuture<Guard> small2 = waiting(semaphore.acquire(1));

        source.cancel();

        assertThrows(CancellationException.class, large::join);
        Guard g1 = granted(small1);
        Guard g2 = granted(small2);
        assertEquals(0, semaphore.availablePermits());
        g1.close();
        g2.close();
        assertPermits(semaphore, 2);
    }

    @Test
    void tokenCancelRacingTheReleaseLosesNoPermit() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        int owned = 0;
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            for (int round = 0; round < ROUNDS; round++) {
                assertTrue(semaphore.tryAcquirePermits(3));
                CancellationSource source = new CancellationSource();
                CompletableFuture<Guard> raced = waiting(semaphore.acquire(2, source.token()));
                CompletableFuture<Guard> behind = waiting(semaphore.acquire(2));
                racer.race(() -> semaphore.release(3), source::cancel, round % 64 - 32);
                String where = "round " + round + ": ";
                assertTrue(raced.isDone(), where + "settled");
                if (raced.isCompletedExceptionally()) {
                    Guard next = granted(behind);
                    assertEquals(1, semaphore.availablePermits(), where);
                    next.close();
                } else {
                    owned++;
                    Guard guard = granted(raced);
                    assertEquals(1, semaphore.availablePermits(), where);
                    assertFalse(behind.isDone(), where + "one permit is not enough for the next request");
                    guard.close();
                    granted(behind).close();
                }
                assertPermits(semaphore, 3);
            }
        }
        SyncTesting.assertBothOutcomes("semaphore token", owned, ROUNDS);
    }
}
