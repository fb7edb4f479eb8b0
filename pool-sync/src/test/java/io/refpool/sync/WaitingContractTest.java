package io.refpool.sync;

import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.joinedCancellation;
import static io.refpool.testkit.TestKit.joinedFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The table "Waiting and failing" of docs/guide.md, row by row, for every way each primitive
 * waits: how a timeout, an interrupt, a cancelled token, a zero or negative duration and a null
 * argument end a blocking wait and an async stage. Every wait is forced: the test holds the lock,
 * so the wait under test must queue.
 */
class WaitingContractTest {
    private static final Duration SHORT = Duration.ofMillis(50);

    /** A blocking way to wait, and what it is called in messages. */
    enum SyncWait {
        BLOCKING("acquireBlocking()") {
            @Override
            Guard await(Primitive.Subject lock, Duration timeout, CancellationToken token) throws Exception {
                return lock.acquireBlocking();
            }
        },
        BLOCKING_TOKEN("acquireBlocking(token)") {
            @Override
            Guard await(Primitive.Subject lock, Duration timeout, CancellationToken token) throws Exception {
                return lock.acquireBlocking(token);
            }
        },
        BLOCKING_TIMED("acquireBlocking(Duration)") {
            @Override
            Guard await(Primitive.Subject lock, Duration timeout, CancellationToken token) throws Exception {
                return lock.acquireBlocking(timeout);
            }
        },
        /** The try form: a timeout is an empty result, returned here as {@code null}. */
        TRY_TIMED("tryAcquire(Duration)") {
            @Override
            Guard await(Primitive.Subject lock, Duration timeout, CancellationToken token) throws Exception {
                return lock.tryAcquire(timeout).orElse(null);
            }
        };

        private final String call;

        SyncWait(String call) {
            this.call = call;
        }

        /** Waits the way this form does, with {@code timeout} or {@code token} where it takes one. */
        abstract Guard await(Primitive.Subject lock, Duration timeout, CancellationToken token) throws Exception;

        boolean timed() {
            return this == BLOCKING_TIMED || this == TRY_TIMED;
        }

        @Override
        public String toString() {
            return call;
        }
    }

    private static Stream<Arguments> every(SyncWait... waits) {
        return Arrays.stream(Primitive.values())
                .flatMap(primitive -> Arrays.stream(waits).map(wait -> Arguments.of(primitive, wait)));
    }

    static Stream<Arguments> allSyncWaits() {
        return every(SyncWait.values());
    }

    static Stream<Arguments> timedSyncWaits() {
        return every(SyncWait.BLOCKING_TIMED, SyncWait.TRY_TIMED);
    }

    static Stream<Arguments> syncWaitsWithAnArgument() {
        return every(SyncWait.BLOCKING_TOKEN, SyncWait.BLOCKING_TIMED, SyncWait.TRY_TIMED);
    }

    // ---------------------------------------------------------------- sync wait: timeout

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void timeoutOfABlockingWaitThrowsWaitTimeoutExceptionNamingTheLockAndTheTime(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();

        WaitTimeoutException timedOut = assertThrows(WaitTimeoutException.class, () -> lock.acquireBlocking(SHORT));

        assertFalse(CancellationException.class.isInstance(timedOut), "a timeout is not a cancellation");
        assertTrue(
                timedOut.getMessage().startsWith("timed out after 50 ms waiting for " + lock.typeName()),
                timedOut.getMessage());
        assertEquals(SHORT, timedOut.timeout());
        assertTrue(
                Arrays.stream(timedOut.getStackTrace())
                        .anyMatch(frame -> frame.getMethodName().startsWith("timeoutOfABlockingWait")),
                "created on the waiting thread: the caller's stack");
        assertEquals(0, lock.queueLength(), "the timed-out waiter left the queue");
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void timeoutOfTheTryFormIsAnEmptyResult(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();

        assertTrue(lock.tryAcquire(SHORT).isEmpty());

        assertEquals(0, lock.queueLength());
        lock.release();
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- sync wait: interrupt

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("allSyncWaits")
    void interruptOfAQueuedWaitThrowsInterruptedExceptionAndClearsTheStatus(Primitive primitive, SyncWait wait)
            throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        TestKit.Forked<Boolean> waiter = fork("waiter", () -> {
            try {
                wait.await(lock, TestKit.BOUND, source.token()).close();
                throw new AssertionError(wait + " returned though the lock was held");
            } catch (InterruptedException e) {
                assertTrue(e.getMessage().contains(lock.typeName()), e.getMessage());
                return Thread.currentThread().isInterrupted();
            }
        });
        eventually().until(() -> lock.queueLength() == 1);
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        waiter.thread.interrupt();

        assertFalse(waiter.join(), "the status is cleared, as java.util.concurrent does");
        assertEquals(1, lock.queueLength(), "only the next waiter is left");
        lock.release();
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("allSyncWaits")
    void interruptBeforeTheCallThrowsInterruptedExceptionEvenIfTheLockIsFree(Primitive primitive, SyncWait wait) {
        Primitive.Subject lock = primitive.create();
        Thread.currentThread().interrupt();

        assertThrows(InterruptedException.class, () -> wait.await(lock, TestKit.BOUND, CancellationToken.none()));

        assertFalse(Thread.interrupted(), "the status is cleared");
        lock.assertFreeAndUsable();
    }

    /**
     * The token decides the wait while its thread is held just before it parks, and the interrupt
     * lands after: the wait ends with the token's cancellation, and the interrupt, which ended
     * nothing, is still set.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void anInterruptThatLosesToTheTokenStaysSet(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        TestKit.Forked<Boolean> waiter = TestKit.unstarted("waiter", () -> {
            try {
                lock.acquireBlocking(source.token()).close();
                throw new AssertionError("granted though the lock was held");
            } catch (CancellationException e) {
                return Thread.currentThread().isInterrupted();
            }
        });
        PausingHooks hooks = new PausingHooks(QueueHooks.Point.BEFORE_PARK, waiter.thread, 1);
        lock.queue().setHooks(hooks);
        waiter.start();
        hooks.awaitArrival();

        source.cancel();
        waiter.thread.interrupt(); // also ends the pause
        hooks.proceed();

        assertTrue(waiter.join(), "the interrupt status is kept when the token wins");
        lock.queue().setHooks(null);
        lock.release();
        lock.assertFreeAndUsable();
    }

    /**
     * The grant lands while the waiter is held just before it parks, and the interrupt after it:
     * the wait returns the guard, which owns the lock, and the interrupt, which ended nothing, is
     * still set.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void anInterruptThatLosesToTheGrantStaysSet(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        TestKit.Forked<Boolean> waiter = TestKit.unstarted("waiter", () -> {
            Guard guard = lock.acquireBlocking();
            boolean kept = Thread.currentThread().isInterrupted();
            assertTrue(lock.isHeld(), "the returned guard owns the lock");
            guard.close();
            return kept;
        });
        PausingHooks hooks = new PausingHooks(QueueHooks.Point.BEFORE_PARK, waiter.thread, 1);
        lock.queue().setHooks(hooks);
        waiter.start();
        hooks.awaitArrival();

        lock.release(); // grants the paused waiter
        waiter.thread.interrupt(); // also ends the pause
        hooks.proceed();

        assertTrue(waiter.join(), "the interrupt status is kept when the grant wins");
        lock.queue().setHooks(null);
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- sync wait: cancellation

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void tokenCancelOfABlockingWaitThrowsCancellationExceptionNamingTheLock(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        TestKit.Forked<Guard> waiter = fork("waiter", () -> lock.acquireBlocking(source.token()));
        eventually().until(() -> lock.queueLength() == 1);

        source.cancel();

        CancellationException cancelled = assertInstanceOf(CancellationException.class, waiter.joinFailure());
        assertTrue(cancelled.getMessage().contains(lock.typeName()), cancelled.getMessage());
        assertEquals(0, lock.queueLength());
        lock.release();
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- sync wait: zero and negative

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("timedSyncWaits")
    void zeroOnAHeldLockTimesOutAtOnceWithoutQueueing(Primitive primitive, SyncWait wait) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        long before = lock.queue().state();

        if (wait == SyncWait.TRY_TIMED) {
            assertNull(wait.await(lock, Duration.ZERO, CancellationToken.none()), "empty: the try form's timeout");
        } else {
            WaitTimeoutException timedOut = assertThrows(
                    WaitTimeoutException.class, () -> wait.await(lock, Duration.ZERO, CancellationToken.none()));
            assertEquals(Duration.ZERO, timedOut.timeout());
        }

        assertEquals(before, lock.queue().state(), "nothing was queued, not even for a moment");
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("timedSyncWaits")
    void zeroOnAFreeLockTakesIt(Primitive primitive, SyncWait wait) throws Exception {
        Primitive.Subject lock = primitive.create();

        Guard guard = wait.await(lock, Duration.ZERO, CancellationToken.none());

        assertNotNull(guard);
        assertTrue(lock.isHeld());
        guard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("timedSyncWaits")
    void negativeIsRefusedAtTheCallNamingTheArgumentAndItsValue(Primitive primitive, SyncWait wait) {
        Primitive.Subject lock = primitive.create();
        for (boolean held : new boolean[] {false, true}) {
            if (held) {
                lock.hold();
            }
            long before = lock.queue().state();
            IllegalArgumentException refused = assertThrows(
                    IllegalArgumentException.class,
                    () -> wait.await(lock, Duration.ofMillis(-1), CancellationToken.none()));
            assertTrue(refused.getMessage().contains("timeout"), refused.getMessage());
            assertTrue(refused.getMessage().contains("PT-0.001S"), refused.getMessage());
            assertEquals(before, lock.queue().state());
        }
        lock.release();
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- sync wait: null argument

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("syncWaitsWithAnArgument")
    void nullArgumentIsRefusedAtTheCallNamingIt(Primitive primitive, SyncWait wait) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        long before = lock.queue().state();

        NullPointerException refused = assertThrows(NullPointerException.class, () -> wait.await(lock, null, null));

        assertEquals(wait.timed() ? "timeout" : "token", refused.getMessage());
        assertEquals(before, lock.queue().state());
        lock.release();
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- async stage: cancellation

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void tokenCancelFailsTheStageWithACancellationNamingTheLock(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> waiter = waiting(lock.acquire(source.token()));

        source.cancel();

        CancellationException cancelled = joinedCancellation(waiter);
        assertTrue(cancelled.getMessage().contains(lock.typeName()), cancelled.getMessage());
        assertEquals(0, lock.queueLength());
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void tokenCancelledBeforeTheCallFailsTheStageEvenIfTheLockIsFree(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        CancellationSource source = new CancellationSource();
        source.cancel();

        CancellationException cancelled = joinedCancellation(lock.acquire(source.token()));

        assertTrue(cancelled.getMessage().contains(lock.typeName()), cancelled.getMessage());
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- async stage: interrupt

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void anAsyncWaitIgnoresTheCallersInterruptAndLeavesItSet(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        Thread.currentThread().interrupt();
        CompletableFuture<Guard> waiter;
        try {
            waiter = waiting(lock.acquire(CancellationToken.none()));
        } finally {
            assertTrue(Thread.interrupted(), "the caller's status is not the async wait's business");
        }

        lock.release();

        granted(waiter).close();
        lock.assertFreeAndUsable();
    }

    // ---------------------------------------------------------------- async stage: arguments

    @ParameterizedTest(name = "{0}")
    @EnumSource(Primitive.class)
    void nullTokenThrowsAtTheCallTheOnlyThrowOfAnAsyncAcquire(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        long before = lock.queue().state();

        NullPointerException refused = assertThrows(NullPointerException.class, () -> lock.acquire(null));

        assertEquals("token", refused.getMessage());
        assertEquals(before, lock.queue().state());
        lock.release();
        lock.assertFreeAndUsable();
    }

    @Test
    void permitsOutOfRangeFailTheAsyncStageAndQueueNothing() {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        assertTrue(semaphore.tryAcquirePermits(3)); // held: a request that were queued would show
        for (int bad : new int[] {0, -1, 4}) {
            for (CompletableFuture<Guard> stage : java.util.List.of(
                    semaphore.acquire(bad).toCompletableFuture(),
                    semaphore.acquire(bad, CancellationToken.none()).toCompletableFuture())) {
                IllegalArgumentException refused =
                        assertInstanceOf(IllegalArgumentException.class, joinedFailure(stage));
                assertTrue(refused.getMessage().contains("permits"), refused.getMessage());
            }
        }
        assertEquals(0, semaphore.queueLength());
        assertThrows(NullPointerException.class, () -> semaphore.acquire(0, null), "null still throws first");
        semaphore.release(3);
        SyncTesting.assertPermits(semaphore, 3);
    }
}
