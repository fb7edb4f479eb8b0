package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertPermits;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad permit counts to {@link AsyncSemaphore} get a clear exception and change no state: at the
 * call, or through the stage of an async acquire. Bad input every primitive refuses alike is in
 * {@link AcquireBadInputTest}.
 */
class AsyncSemaphoreBadInputTest {
    private static void assertRejected(Class<? extends Throwable> type, String mustContain, Executable call) {
        Throwable e = assertThrows(type, call);
        assertTrue(e.getMessage() != null && e.getMessage().contains(mustContain), () -> e.getMessage());
    }

    /** An async acquire fails only through its stage: it must not throw, and the stage fails so. */
    private static void assertStageRejected(String mustContain, Supplier<CompletionStage<Guard>> call) {
        Throwable e = assertInstanceOf(IllegalArgumentException.class, TestKit.joinedFailure(call.get()));
        assertTrue(e.getMessage() != null && e.getMessage().contains(mustContain), () -> e.getMessage());
    }

    @Test
    void constructorRejectsCountsOutOfRange() {
        assertRejected(IllegalArgumentException.class, "permits must be", () -> new AsyncSemaphore(0));
        assertRejected(IllegalArgumentException.class, "maxPermits", () -> new AsyncSemaphore(0, -3));
        assertRejected(IllegalArgumentException.class, "initialPermits", () -> new AsyncSemaphore(-1, 3));
        assertRejected(IllegalArgumentException.class, "initialPermits", () -> new AsyncSemaphore(4, 3));
    }

    @Test
    void zeroOrNegativePermitsAreRejectedByEveryMethod() {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        for (int bad : List.of(0, -1, Integer.MIN_VALUE)) {
            assertStageRejected("permits", () -> semaphore.acquire(bad));
            assertStageRejected("permits", () -> semaphore.acquire(bad, CancellationToken.none()));
            assertRejected(IllegalArgumentException.class, "permits", () -> semaphore.acquireBlocking(bad));
            assertRejected(
                    IllegalArgumentException.class, "permits", () -> semaphore.acquireBlocking(bad, Duration.ZERO));
            assertRejected(IllegalArgumentException.class, "permits", () -> semaphore.tryAcquire(bad));
            assertRejected(
                    IllegalArgumentException.class, "permits", () -> semaphore.tryAcquire(bad, Duration.ofSeconds(1)));
            assertRejected(IllegalArgumentException.class, "permits", () -> semaphore.tryAcquirePermits(bad));
            assertRejected(IllegalArgumentException.class, "permits", () -> semaphore.release(bad));
        }
        assertPermits(semaphore, 3);
    }

    @Test
    void permitsAboveTheMaximumAreRejectedAsNeverServable() {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        assertTrue(semaphore.tryAcquirePermits(3));

        assertStageRejected("maximum of 3", () -> semaphore.acquire(4));
        assertRejected(IllegalArgumentException.class, "maximum of 3", () -> semaphore.acquireBlocking(4));
        assertRejected(IllegalArgumentException.class, "maximum of 3", () -> semaphore.tryAcquirePermits(4));
        assertRejected(IllegalArgumentException.class, "maximum of 3", () -> semaphore.release(Integer.MAX_VALUE));

        assertEquals(0, semaphore.queueLength(), "a request that could never be served is not queued");
        semaphore.release(3);
        assertPermits(semaphore, 3);
    }

    @Test
    void releaseBeyondTheMaximumIsRejectedAndChangesNothing() {
        AsyncSemaphore semaphore = new AsyncSemaphore(2, 3);

        assertRejected(IllegalStateException.class, "exceed its maximum of 3", () -> semaphore.release(2));

        assertPermits(semaphore, 2);
        semaphore.release(1);
        assertPermits(semaphore, 3);
        assertRejected(IllegalStateException.class, "with 3 available", () -> semaphore.release(1));
        assertPermits(semaphore, 3);
    }

    @Test
    void releaseBeyondTheMaximumWhileRequestsWaitIsRejectedAndServesNobody() {
        AsyncSemaphore semaphore = new AsyncSemaphore(1, 3);
        CompletableFuture<Guard> queued = waiting(semaphore.acquire(3));

        assertRejected(IllegalStateException.class, "maximum of 3", () -> semaphore.release(3));

        assertEquals(1, semaphore.availablePermits());
        assertEquals(1, semaphore.queueLength());
        semaphore.release(2);
        granted(queued).close();
        assertPermits(semaphore, 3);
    }

    @Test
    void closingAGuardTwiceReturnsItsPermitsOnce() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(2);
        Guard guard = semaphore.acquireBlocking(2);

        guard.close();
        guard.close();

        assertPermits(semaphore, 2);
    }

    @Test
    void rawReleaseCannotReturnPermitsHeldByAGuard() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        Guard guard = semaphore.acquireBlocking(2);
        assertTrue(semaphore.tryAcquirePermits(1));
        CompletableFuture<Guard> queued = waiting(semaphore.acquire(2));

        assertRejected(IllegalStateException.class, "2 held by guards", () -> semaphore.release(2));

        assertEquals(0, semaphore.availablePermits());
        assertEquals(1, semaphore.queueLength());
        waiting(queued);
        semaphore.release(1);
        waiting(queued);
        guard.close();
        granted(queued).close();
        assertPermits(semaphore, 3);
    }
}
