package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.awaitQueued;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
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
