package io.refpool.sync;

import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Grant versus cancel, for every primitive, raced 1,000 rounds for each way a wait can end early
 * (the future's cancel, complete and completeExceptionally, orTimeout, completeOnTimeout, the token,
 * a blocking timeout, an interrupt, the token of a blocked waiter). Each round the holder's release
 * and the cancellation start together (or, for a timeout, the release sweeps across it), and
 * exactly one outcome holds: the waiter owns the lock and the next waiter waits for it, or it was
 * cancelled, owns nothing, and the next waiter has the lock. The lock ends free. A race runs its
 * rounds again, with a wider sweep, while it has ended only one way ({@link
 * TestKit#raceBothWays}).
 */
class GrantVersusCancelRaceTest {
    private static final int ROUNDS = 1_000;
    private static final Guard FOREIGN = () -> {};

    /**
     * The timeout of the timed races; the holder releases after a delay swept from zero to {@link
     * #SWEEP_STEP} times 49, far past it, so early rounds of each sweep are granted and late ones
     * time out, and the rounds in between race the timer.
     */
    private static final long TIMEOUT_NANOS = 100_000;

    private static final long SWEEP_STEP = 40_000;

    /** {@return the release's delay in {@code round} of {@code run}}: each later run sweeps twice as far. */
    private static long releaseDelay(int round, int run) {
        return (round % 50) * (SWEEP_STEP << run);
    }

    /**
     * Races {@code cancel} (given the waiter and its token's source, returning whether it won)
     * against the holder's release, ROUNDS times.
     */
    private static void raceAsync(
            Primitive primitive,
            String name,
            boolean withToken,
            BiPredicate<CompletableFuture<Guard>, CancellationSource> cancel)
            throws Exception {
        Primitive.Subject lock = primitive.create();
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            TestKit.raceBothWays(name, ROUNDS, (round, run) -> {
                lock.hold();
                CancellationSource source = new CancellationSource();
                CompletableFuture<Guard> waiter = waiting(withToken ? lock.acquire(source.token()) : lock.acquire());
                CompletableFuture<Guard> next = waiting(lock.acquireNext());
                AtomicBoolean cancelWon = new AtomicBoolean();
                racer.race(
                        lock::release, () -> cancelWon.set(cancel.test(waiter, source)), SyncTesting.skew(round, run));
                return checkExactlyOneOutcome(name, round, lock, waiter, next, cancelWon.get());
            });
        }
        lock.assertFreeAndUsable();
    }

    /** Sweeps the holder's release across a timer that ends the wait with {@code arm}, ROUNDS times. */
    private static void raceTimer(Primitive primitive, String name, TimedOut arm) throws Exception {
        Primitive.Subject lock = primitive.create();
        TestKit.raceBothWays(name, ROUNDS, (round, run) -> {
            lock.hold();
            CompletableFuture<Guard> waiter = waiting(lock.acquire());
            CompletableFuture<Guard> next = waiting(lock.acquireNext());
            arm.arm(waiter);
            SyncTesting.spinFor(releaseDelay(round, run));
            lock.release();
            eventually().until(waiter::isDone);
            boolean timedOut = waiter.isCompletedExceptionally() || waiter.join() == FOREIGN;
            return checkExactlyOneOutcome(name, round, lock, waiter, next, timedOut);
        });
        lock.assertFreeAndUsable();
    }

    @FunctionalInterface
    private interface TimedOut {
        void arm(CompletableFuture<Guard> waiter);
    }

    /** {@return whether the waiter owned the lock}; asserts the outcome is one of the two legal ones. */
    private static boolean checkExactlyOneOutcome(
            String name,
            int round,
            Primitive.Subject lock,
            CompletableFuture<Guard> waiter,
            CompletableFuture<Guard> next,
            boolean cancelWon)
            throws Exception {
        String where = name + ", round " + round + ": ";
        assertTrue(waiter.isDone(), where + "the future is settled when both sides returned");
        boolean owner = !waiter.isCompletedExceptionally() && waiter.join() != FOREIGN;
        if (owner) {
            assertFalse(cancelWon, where + "the cancel reported success but the waiter owns the lock");
            assertTrue(lock.isHeld(), where + "owner, yet the lock is free");
            assertFalse(next.isDone(), where + "the next waiter waits for the owner");
            Guard guard = waiter.join();
            assertNotSame(FOREIGN, guard, where + "owner, yet the future holds the caller's value");
            guard.close();
        } else {
            assertTrue(cancelWon, where + "the cancel lost but the waiter owns nothing");
        }
        assertNextGetsTheLockAndItEndsFree(where, lock, next);
        return owner;
    }

    private static void assertNextGetsTheLockAndItEndsFree(
            String where, Primitive.Subject lock, CompletableFuture<Guard> next) throws Exception {
        next.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).close();
        assertFalse(lock.isHeld(), where + "the lock ends free");
        assertEquals(0, lock.queueLength(), where + "the queue ends empty");
    }

    /** Waits for {@code flag} without looking at the interrupt status, which the test checks. */
    private static void awaitSet(AtomicBoolean flag) {
        while (!flag.get()) {
            Thread.yield();
        }
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void futureCancelRacingTheGrantEndsOwnedOrCancelled(Primitive primitive) throws Exception {
        raceAsync(primitive, "cancel", false, (waiter, source) -> waiter.cancel(true));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void futureCompleteRacingTheGrantEndsOwnedOrCancelled(Primitive primitive) throws Exception {
        raceAsync(primitive, "complete", false, (waiter, source) -> waiter.complete(FOREIGN));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void futureCompleteExceptionallyRacingTheGrantEndsOwnedOrCancelled(Primitive primitive) throws Exception {
        IllegalStateException gaveUp = new IllegalStateException("caller gave up"); // made outside the race
        raceAsync(primitive, "completeExceptionally", false, (waiter, source) -> waiter.completeExceptionally(gaveUp));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenCancelRacingTheGrantEndsOwnedOrCancelled(Primitive primitive) throws Exception {
        raceAsync(primitive, "token", true, (waiter, source) -> {
            source.cancel();
            return waiter.isCompletedExceptionally(); // a cancel that wins settles the future before returning
        });
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void orTimeoutRacingTheGrantEndsOwnedOrCancelled(Primitive primitive) throws Exception {
        raceTimer(primitive, "orTimeout", waiter -> waiter.orTimeout(TIMEOUT_NANOS, TimeUnit.NANOSECONDS));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void completeOnTimeoutRacingTheGrantEndsOwnedOrCancelled(Primitive primitive) throws Exception {
        raceTimer(
                primitive,
                "completeOnTimeout",
                waiter -> waiter.completeOnTimeout(FOREIGN, TIMEOUT_NANOS, TimeUnit.NANOSECONDS));
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void blockingTimeoutRacingTheGrantEndsOwnedOrTimedOut(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        Duration timeout = Duration.ofNanos(TIMEOUT_NANOS);
        TestKit.raceBothWays("blocking timeout", ROUNDS, (round, run) -> {
            lock.hold();
            TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> lock.tryAcquire(timeout));
            while (lock.queueLength() == 0 && !timed.outcome.isDone()) {
                Thread.onSpinWait(); // the clock of the sweep starts when the waiter is queued
            }
            SyncTesting.spinFor(releaseDelay(round, run));
            lock.release();
            Optional<Guard> guard = timed.join();
            String where = "blocking timeout, round " + round + ": ";
            if (guard.isPresent()) {
                assertTrue(lock.isHeld(), where + "a returned guard owns the lock");
                guard.get().close();
            }
            assertFalse(lock.isHeld(), where + "the lock ends free");
            assertEquals(0, lock.queueLength(), where + "the queue ends empty");
            return guard.isPresent();
        });
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void interruptRacingTheGrantEndsOwnedWithTheInterruptKeptOrInterrupted(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            TestKit.raceBothWays("interrupt", ROUNDS, (round, run) -> {
                lock.hold();
                AtomicBoolean raceOver = new AtomicBoolean();
                TestKit.Forked<Guard> blocked = fork("blocked", () -> {
                    Guard guard;
                    try {
                        guard = lock.acquireBlocking();
                    } catch (InterruptedException e) {
                        awaitSet(raceOver);
                        if (Thread.interrupted()) {
                            fail("the interrupt was reported by the exception and must not stay set");
                        }
                        return null;
                    }
                    awaitSet(raceOver);
                    if (!Thread.interrupted()) {
                        fail("the grant won over the interrupt, which must stay set for the caller");
                    }
                    return guard;
                });
                eventually().until(() -> lock.queueLength() == 1);
                CompletableFuture<Guard> next = waiting(lock.acquireNext());
                racer.race(blocked.thread::interrupt, lock::release, SyncTesting.skew(round, run));
                raceOver.set(true);
                return checkBlockedOutcome("interrupt, round " + round + ": ", lock, blocked.join(), next);
            });
        }
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void tokenCancelRacingTheGrantOfABlockingWaiterEndsOwnedOrCancellationException(Primitive primitive)
            throws Exception {
        Primitive.Subject lock = primitive.create();
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            TestKit.raceBothWays("token, blocking", ROUNDS, (round, run) -> {
                lock.hold();
                CancellationSource source = new CancellationSource();
                TestKit.Forked<Guard> blocked = fork("blocked", () -> lock.acquireBlocking(source.token()));
                eventually().until(() -> lock.queueLength() == 1);
                CompletableFuture<Guard> next = waiting(lock.acquireNext());
                racer.race(lock::release, source::cancel, SyncTesting.skew(round, run));
                Guard guard;
                try {
                    guard = blocked.join();
                } catch (CancellationException e) {
                    guard = null;
                }
                return checkBlockedOutcome("token, blocking, round " + round + ": ", lock, guard, next);
            });
        }
        lock.assertFreeAndUsable();
    }

    /** {@return whether the blocked waiter returned a guard}, which must own the lock */
    private static boolean checkBlockedOutcome(
            String where, Primitive.Subject lock, Guard guard, CompletableFuture<Guard> next) throws Exception {
        if (guard != null) {
            assertTrue(lock.isHeld(), where + "a returned guard owns the lock");
            assertFalse(next.isDone(), where + "the next waiter waits for the owner");
            guard.close();
        }
        assertNextGetsTheLockAndItEndsFree(where, lock, next);
        return guard != null;
    }
}
