package io.refpool.sync;

import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The caller's own completion methods on a waiting acquire go through grant versus cancel, for
 * every primitive: on a waiting future they cancel the wait and the lock passes on; on a granted one
 * they leave the caller owning the lock. The lock is never lost or corrupted either way.
 */
class WaitCallerCompletionTest {
    /** A value a caller might force into the future; it owns nothing. */
    private static final Guard FOREIGN = () -> {};

    /**
     * Ends a waiting acquire with {@code giveUp}, checks the future with {@code ended}, and asserts
     * that the waiter left the queue and the lock passes to the next waiter.
     */
    private static void assertGivingUpPassesTheLockOn(
            Primitive primitive, Consumer<CompletableFuture<Guard>> giveUp, Consumer<CompletableFuture<Guard>> ended) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> waiter = waiting(lock.acquire());
        CompletableFuture<Guard> next = waiting(lock.acquireNext());

        giveUp.accept(waiter);
        eventually().until(waiter::isDone);

        ended.accept(waiter);
        assertEquals(1, lock.queueLength(), "the waiter that gave up left the queue");
        lock.release();
        granted(next).close();
        lock.assertFreeAndUsable();
    }

    /** Tries {@code lateCompletion} on a granted acquire and asserts the caller still owns the lock. */
    private static void assertGrantedFutureKeepsOwnership(
            Primitive primitive, Predicate<CompletableFuture<Guard>> lateCompletion) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> waiter = waiting(lock.acquire());
        lock.release();

        assertFalse(lateCompletion.test(waiter));

        Guard guard = granted(waiter);
        assertNotSame(FOREIGN, guard);
        assertTrue(lock.isHeld());
        guard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn(Primitive primitive) {
        assertGivingUpPassesTheLockOn(
                primitive,
                waiter -> assertTrue(waiter.complete(FOREIGN)),
                waiter -> assertSame(FOREIGN, waiter.join()));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeOnAGrantedFutureReturnsFalseAndKeepsOwnership(Primitive primitive) {
        assertGrantedFutureKeepsOwnership(primitive, waiter -> waiter.complete(FOREIGN));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeExceptionallyOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn(Primitive primitive) {
        IllegalStateException failure = new IllegalStateException("given up");
        assertGivingUpPassesTheLockOn(
                primitive,
                waiter -> assertTrue(waiter.completeExceptionally(failure)),
                waiter -> assertSame(
                        failure,
                        assertThrows(CompletionException.class, waiter::join).getCause()));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeExceptionallyOnAGrantedFutureReturnsFalseAndKeepsOwnership(Primitive primitive) {
        assertGrantedFutureKeepsOwnership(
                primitive, waiter -> waiter.completeExceptionally(new IllegalStateException("too late")));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void obtrudeValueOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn(Primitive primitive) {
        assertGivingUpPassesTheLockOn(
                primitive, waiter -> waiter.obtrudeValue(FOREIGN), waiter -> assertSame(FOREIGN, waiter.join()));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void obtrudeValueOnAGrantedFutureThrowsAndKeepsOwnership(Primitive primitive) {
        assertGrantedFutureKeepsOwnership(primitive, waiter -> {
            IllegalStateException refused =
                    assertThrows(IllegalStateException.class, () -> waiter.obtrudeValue(FOREIGN));
            assertTrue(refused.getMessage().contains(primitive.create().typeName()), refused.getMessage());
            return false;
        });
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void obtrudeOnTheFutureOfAGrantThatDidNotWaitThrowsAndKeepsOwnership(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        CompletableFuture<Guard> granted = lock.acquire().toCompletableFuture(); // free: granted at once

        assertThrows(IllegalStateException.class, () -> granted.obtrudeValue(FOREIGN));
        assertThrows(IllegalStateException.class, () -> granted.obtrudeException(new IllegalStateException("no")));

        Guard guard = granted.join();
        assertNotSame(FOREIGN, guard);
        assertTrue(lock.isHeld());
        guard.close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void obtrudeExceptionOnAGrantedFutureThrowsAndKeepsOwnership(Primitive primitive) {
        assertGrantedFutureKeepsOwnership(primitive, waiter -> {
            assertThrows(IllegalStateException.class, () -> waiter.obtrudeException(new IllegalStateException("no")));
            return false;
        });
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void orTimeoutOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn(Primitive primitive) {
        assertGivingUpPassesTheLockOn(primitive, waiter -> waiter.orTimeout(1, TimeUnit.MILLISECONDS), waiter -> {
            CompletionException thrown = assertThrows(CompletionException.class, waiter::join);
            assertInstanceOf(TimeoutException.class, thrown.getCause());
        });
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeOnTimeoutOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn(Primitive primitive) {
        assertGivingUpPassesTheLockOn(
                primitive,
                waiter -> waiter.completeOnTimeout(FOREIGN, 1, TimeUnit.MILLISECONDS),
                waiter -> assertSame(FOREIGN, waiter.join()));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeAsyncOnAWaitingFutureCancelsTheWaitAndTheLockPassesOn(Primitive primitive) {
        assertGivingUpPassesTheLockOn(
                primitive,
                waiter -> waiter.completeAsync(() -> FOREIGN, Runnable::run),
                waiter -> assertSame(FOREIGN, waiter.join()));
    }
}
