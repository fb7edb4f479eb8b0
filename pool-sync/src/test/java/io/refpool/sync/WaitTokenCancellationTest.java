package io.refpool.sync;

import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Cancelling a wait through a {@link CancellationToken}, for every primitive: the wait ends with a
 * {@link CancellationException} naming the lock and nothing owned, or, if the grant won, the caller
 * owns the lock; either way the lock passes on. Includes the token firing before the acquire,
 * before publication, after the waiter was popped for a grant, and after the grant.
 */
class WaitTokenCancellationTest {
    private static final int ROUNDS = 1_000;

    /** A wait ended by the token reads as cancelled, whether it was queued first or not. */
    private static void assertCancelledByToken(CompletableFuture<Guard> future) {
        assertTrue(future.isCancelled(), () -> "expected a cancelled acquire, was " + future);
        assertThrows(CancellationException.class, future::join);
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenCancelOfAQueuedWaiterFailsItWithCancellationAndTheNextIsGranted(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> cancelled = waiting(lock.acquire(source.token()));
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        assertTrue(source.cancel());

        assertCancelledByToken(cancelled);
        assertEquals(1, lock.queueLength());
        lock.release();
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void alreadyCancelledTokenFailsAtOnceAndTouchesNothing(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        CancellationSource source = new CancellationSource();
        source.cancel();

        assertCancelledByToken(lock.acquire(source.token()).toCompletableFuture());
        assertThrows(CancellationException.class, () -> lock.acquireBlocking(source.token()));
        lock.assertFreeAndUsable();

        lock.hold();
        long before = lock.queue().state();
        assertCancelledByToken(lock.acquire(source.token()).toCompletableFuture());
        assertThrows(CancellationException.class, () -> lock.acquireBlocking(source.token()));
        assertEquals(before, lock.queue().state(), "a held lock is left as it was");
        assertEquals(0, lock.queueLength());
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenCancelWakesABlockedWaiterWithCancellationExceptionAndTheNextIsGranted(Primitive primitive)
            throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        TestKit.Forked<Guard> blocked = fork("blocked", () -> lock.acquireBlocking(source.token()));
        eventually().until(() -> lock.queueLength() == 1);
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        source.cancel();

        Throwable failure = blocked.joinFailure();
        assertInstanceOf(CancellationException.class, failure);
        assertTrue(failure.getMessage().contains(lock.typeName()), failure.getMessage());
        assertEquals(1, lock.queueLength());
        lock.release();
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    /**
     * A blocked thread can wake spuriously at any time (a third thread unparks it here, over and
     * over) and see its wait cancelled by the token before the canceller has written the cause:
     * it must still report a {@link CancellationException}, never another exception.
     */
    @ParameterizedTest
    @EnumSource(Primitive.class)
    void spuriouslyWokenBlockedWaiterCancelledByTheTokenThrowsCancellationException(Primitive primitive)
            throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        AtomicReference<Thread> blockedThread = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        TestKit.Forked<Void> waker = TestKit.forkRun("waker", () -> {
            while (!stop.get()) {
                Thread t = blockedThread.get();
                if (t != null) {
                    LockSupport.unpark(t);
                }
            }
        });
        try {
            for (int round = 0; round < ROUNDS; round++) {
                CancellationSource source = new CancellationSource();
                TestKit.Forked<Guard> blocked = fork("blocked", () -> lock.acquireBlocking(source.token()));
                blockedThread.set(blocked.thread);
                eventually().until(() -> lock.queueLength() == 1);
                source.cancel();
                Throwable failure = blocked.joinFailure();
                assertInstanceOf(CancellationException.class, failure, "round " + round);
                assertTrue(failure.getMessage().contains(lock.typeName()), failure.getMessage());
            }
        } finally {
            stop.set(true);
            waker.join();
        }
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenFiringBeforePublicationQueuesNothing(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        PausingHooks paused = new PausingHooks(Point.AFTER_WAITER_ALLOCATED);
        lock.queue().setHooks(paused);
        TestKit.Forked<CompletionStage<Guard>> acquirer = fork("acquirer", () -> lock.acquire(source.token()));
        paused.awaitArrival(); // registration not made yet: it is, right after this point

        source.cancel();
        paused.proceed();

        assertCancelledByToken(acquirer.join().toCompletableFuture());
        assertEquals(0, lock.queueLength());
        assertTrue(lock.isHeld());
        lock.queue().setHooks(null);
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenCancelWinsOverAPoppedGrantAndTheLockPassesOn(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> popped = waiting(lock.acquire(source.token()));
        CompletableFuture<Guard> next = waiting(lock.acquireNext());
        Primitive.PausedRelease release = lock.releasePausedAfterPop();

        assertTrue(source.cancel());
        release.finish();

        assertCancelledByToken(popped);
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenCancelAfterTheGrantKeepsOwnership(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> waiter = waiting(lock.acquire(source.token()));
        lock.release();
        Guard guard = granted(waiter);

        source.cancel();

        assertFalse(waiter.isCompletedExceptionally());
        assertTrue(lock.isHeld(), "a token cancelled after the grant does not take the lock back");
        guard.close();
        lock.assertFreeAndUsable();
    }
}
