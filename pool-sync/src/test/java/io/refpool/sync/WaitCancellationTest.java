package io.refpool.sync;

import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.notGranted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A cancelled wait owns nothing and never costs the lock, for every primitive: the next waiter is
 * granted, or the lock is freed. Covers cancel of a queued waiter, of a waiter already popped for a
 * grant (the releaser paused at {@code BETWEEN_POP_AND_COMPLETION}), cancel after the grant, and a
 * blocking wait ended by an interrupt or its timeout.
 */
class WaitCancellationTest {
    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelledQueuedWaiterIsSkippedAndTheNextOneGranted(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> cancelled = waiting(lock.acquire());
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        assertTrue(cancelled.cancel(true));
        assertEquals(1, lock.queueLength(), "the cancelled waiter left the queue at once");
        lock.release();

        assertTrue(cancelled.isCancelled());
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancellingTheOnlyWaiterThenReleasingFreesTheLock(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> cancelled = waiting(lock.acquire());

        assertTrue(cancelled.cancel(true));
        lock.release();

        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void cancellingAWaiterInTheMiddleKeepsTheOthersInOrder(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> first = waiting(lock.acquire());
        CompletableFuture<Guard> middle = waiting(lock.acquire());
        CompletableFuture<Guard> last = waiting(lock.acquire());

        assertTrue(middle.cancel(false));
        lock.release();

        Guard firstGuard = granted(first);
        assertFalse(last.isDone());
        firstGuard.close();
        granted(last).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelWinsOverAPoppedGrantAndTheLockPassesToTheNextWaiter(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> popped = waiting(lock.acquire());
        CompletableFuture<Guard> next = waiting(lock.acquireNext());
        Primitive.PausedRelease release = lock.releasePausedAfterPop();

        assertTrue(popped.cancel(true), "the cancel decides the popped waiter before the grant");
        release.finish();

        assertTrue(popped.isCancelled());
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelWinsOverAPoppedGrantAndTheLockIsFreedBeforeTheCancelReturns(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> popped = waiting(lock.acquire());
        Primitive.PausedRelease release = lock.releasePausedAfterPop();

        assertTrue(popped.cancel(true));
        assertFalse(lock.isHeld(), "the cancel hands the popped waiter's ownership back before it returns");
        release.finish();

        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void interruptOfAPoppedBlockingWaiterPassesTheLockOn(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        TestKit.Forked<Guard> blocked = fork("blocked", lock::acquireBlocking);
        eventually().until(() -> lock.queueLength() == 1);
        CompletableFuture<Guard> next = waiting(lock.acquireNext());
        Primitive.PausedRelease release = lock.releasePausedAfterPop();

        blocked.thread.interrupt();
        assertInstanceOf(InterruptedException.class, blocked.joinFailure());
        release.finish();

        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void timeoutOfAPoppedBlockingWaiterPassesTheLockOn(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> lock.tryAcquire(Duration.ofMillis(200)));
        eventually().until(() -> lock.queueLength() == 1);
        CompletableFuture<Guard> next = waiting(lock.acquireNext());
        Primitive.PausedRelease release = lock.releasePausedAfterPop(); // its deadline passes meanwhile

        assertEquals(Optional.empty(), timed.join());
        release.finish();

        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelAfterTheGrantReturnsFalseAndKeepsOwnership(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> waiter = waiting(lock.acquire());
        lock.release();

        assertFalse(waiter.cancel(true));

        assertFalse(waiter.isCancelled());
        Guard guard = granted(waiter);
        assertTrue(lock.isHeld());
        guard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelOfAnUncontendedAcquireReturnsFalseAndKeepsOwnership(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        CompletableFuture<Guard> acquired = lock.acquire().toCompletableFuture();

        assertFalse(acquired.cancel(true));

        Guard guard = granted(acquired);
        assertTrue(lock.isHeld());
        guard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void interruptedBlockingWaiterLeavesTheQueueAndOwnsNothing(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        TestKit.Forked<Guard> blocked = fork("blocked", lock::acquireBlocking);
        eventually().until(() -> lock.queueLength() == 1);
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        blocked.thread.interrupt();

        assertInstanceOf(InterruptedException.class, blocked.joinFailure());
        assertEquals(1, lock.queueLength());
        lock.release();
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void timedOutWaiterLeavesTheQueueAndOwnsNothing(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> lock.tryAcquire(Duration.ofMillis(50)));
        eventually().until(() -> lock.queueLength() == 1);
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        assertEquals(Optional.empty(), timed.join());

        assertEquals(1, lock.queueLength());
        lock.release();
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void interruptBeforeBlockingAcquireThrowsAndTakesNothing(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        Thread.currentThread().interrupt();

        assertThrows(InterruptedException.class, lock::acquireBlocking);

        assertFalse(Thread.interrupted());
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelledFutureReportsCancellationToItsDependents(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> waiter = waiting(lock.acquire());
        CompletableFuture<String> dependent = waiter.thenApply(guard -> "owned");

        assertTrue(waiter.cancel(false));

        assertTrue(dependent.isCompletedExceptionally());
        assertThrows(CancellationException.class, waiter::join);
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancellingADependentStageDoesNotCancelTheWait(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> waiter = waiting(lock.acquire());
        CompletableFuture<Guard> dependent = waiter.thenApply(guard -> guard);

        assertTrue(dependent.cancel(true));
        lock.release();

        Guard guard = granted(waiter);
        assertTrue(lock.isHeld(), "the wait itself was never cancelled, so it owns the lock");
        guard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void closingAGrantedGuardTwiceReleasesOnce(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> first = waiting(lock.acquire());
        CompletableFuture<Guard> second = waiting(lock.acquire());
        lock.release();
        Guard guard = granted(first);

        guard.close();
        guard.close(); // must not release the second waiter's ownership

        Guard secondGuard = granted(second);
        assertTrue(lock.isHeld());
        assertSame(secondGuard, second.join());
        secondGuard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void cancelledFutureNeverCompletesWithAGuardLater(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> waiter = waiting(lock.acquire());
        assertTrue(waiter.cancel(true));
        lock.release();
        eventually().until(() -> !lock.isHeld());

        notGranted(waiter);
        assertTrue(waiter.isCancelled());
        lock.assertFreeAndUsable();
    }
}
