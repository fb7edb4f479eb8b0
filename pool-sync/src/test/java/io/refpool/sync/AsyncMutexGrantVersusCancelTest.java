package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.waiting;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Grant versus cancel on {@link AsyncMutex}, raced 1,000 rounds for each way a wait can end early
 * (the future's cancel, complete and completeExceptionally, orTimeout, completeOnTimeout, a
 * blocking timeout, an interrupt): each round the release and the cancellation start together (or,
 * for a timeout, the release sweeps across it), exactly one outcome holds — the waiter owns the lock, or it was cancelled and owns nothing — and
 * the lock ends free.
 */
class AsyncMutexGrantVersusCancelTest {
    private static final int ROUNDS = 1_000;
    private static final Guard FOREIGN = () -> {};

    /** Races {@code cancel} (returning whether it won) against the holder's unlock, ROUNDS times. */
    private static void raceAsync(String name, Predicate<CompletableFuture<Guard>> cancel) throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            for (int round = 0; round < ROUNDS; round++) {
                assertTrue(mutex.tryLock());
                CompletableFuture<Guard> waiter = waiting(mutex.acquire());
                AtomicBoolean cancelWon = new AtomicBoolean();
                racer.race(mutex::unlock, () -> cancelWon.set(cancel.test(waiter)), round % 64 - 32);
                owned += checkExactlyOneOutcome(name, round, mutex, waiter, cancelWon.get()) ? 1 : 0;
            }
        }
        SyncTesting.assertBothOutcomes(name, owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }

    /** {@return whether the waiter owned the lock}; asserts the outcome is one of the two legal ones. */
    private static boolean checkExactlyOneOutcome(
            String name, int round, AsyncMutex mutex, CompletableFuture<Guard> waiter, boolean cancelWon) {
        String where = name + ", round " + round + ": ";
        assertTrue(waiter.isDone(), where + "the future is settled when both sides returned");
        boolean owner = mutex.isLocked();
        if (owner) {
            assertFalse(cancelWon, where + "the cancel reported success but the waiter owns the lock");
            assertFalse(waiter.isCompletedExceptionally(), where + "owner, yet the future failed");
            Guard guard = waiter.join();
            assertNotSame(FOREIGN, guard, where + "owner, yet the future holds the caller's value");
            guard.close();
        } else {
            assertTrue(cancelWon, where + "the cancel lost but nobody owns the lock");
            assertTrue(
                    waiter.isCompletedExceptionally() || waiter.join() == FOREIGN,
                    where + "cancelled, yet the future holds a guard");
        }
        assertFalse(mutex.isLocked(), where + "the lock ends free");
        assertEquals(0, mutex.queueLength(), where + "the queue ends empty");
        return owner;
    }

    /** Waits for {@code flag} without looking at the interrupt status, which the test checks. */
    private static void awaitSet(AtomicBoolean flag) {
        while (!flag.get()) {
            Thread.yield();
        }
    }

    @Test
    void futureCancelRacingTheGrantEndsOwnedOrCancelled() throws Exception {
        raceAsync("cancel", waiter -> waiter.cancel(true));
    }

    @Test
    void futureCompleteRacingTheGrantEndsOwnedOrCancelled() throws Exception {
        raceAsync("complete", waiter -> waiter.complete(FOREIGN));
    }

    @Test
    void futureCompleteExceptionallyRacingTheGrantEndsOwnedOrCancelled() throws Exception {
        raceAsync("completeExceptionally", waiter -> waiter.completeExceptionally(new IllegalStateException("x")));
    }

    /**
     * The timeout of the timed races; the holder unlocks after a delay swept from zero to {@link
     * #SWEEP_STEP} times 49, far past it, so early rounds of each sweep are granted and late ones
     * time out, and the rounds in between race the timer.
     */
    private static final long TIMEOUT_NANOS = 100_000;

    private static final long SWEEP_STEP = 40_000;

    private static long unlockDelay(int round) {
        return (round % 50) * SWEEP_STEP;
    }

    @Test
    void orTimeoutRacingTheGrantEndsOwnedOrCancelled() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        for (int round = 0; round < ROUNDS; round++) {
            assertTrue(mutex.tryLock());
            CompletableFuture<Guard> waiter = waiting(mutex.acquire());
            waiter.orTimeout(TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
            SyncTesting.spinFor(unlockDelay(round));
            mutex.unlock();
            eventually().until(waiter::isDone);
            boolean timedOut = waiter.isCompletedExceptionally();
            owned += checkExactlyOneOutcome("orTimeout", round, mutex, waiter, timedOut) ? 1 : 0;
        }
        SyncTesting.assertBothOutcomes("orTimeout", owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }

    @Test
    void completeOnTimeoutRacingTheGrantEndsOwnedOrCancelled() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        for (int round = 0; round < ROUNDS; round++) {
            assertTrue(mutex.tryLock());
            CompletableFuture<Guard> waiter = waiting(mutex.acquire());
            waiter.completeOnTimeout(FOREIGN, TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
            SyncTesting.spinFor(unlockDelay(round));
            mutex.unlock();
            eventually().until(waiter::isDone);
            boolean timedOut = waiter.join() == FOREIGN;
            owned += checkExactlyOneOutcome("completeOnTimeout", round, mutex, waiter, timedOut) ? 1 : 0;
        }
        SyncTesting.assertBothOutcomes("completeOnTimeout", owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }

    @Test
    void blockingTimeoutRacingTheGrantEndsOwnedOrTimedOut() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        Duration timeout = Duration.ofNanos(TIMEOUT_NANOS);
        for (int round = 0; round < ROUNDS; round++) {
            assertTrue(mutex.tryLock());
            TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> mutex.tryAcquire(timeout));
            while (mutex.queueLength() == 0 && !timed.outcome.isDone()) {
                Thread.onSpinWait(); // the clock of the sweep starts when the waiter is queued
            }
            SyncTesting.spinFor(unlockDelay(round));
            mutex.unlock();
            Optional<Guard> guard = timed.join();
            String where = "blocking timeout, round " + round + ": ";
            if (guard.isPresent()) {
                assertTrue(mutex.isLocked(), where + "a returned guard owns the lock");
                guard.get().close();
                owned++;
            }
            assertFalse(mutex.isLocked(), where + "the lock ends free");
            assertEquals(0, mutex.queueLength(), where + "the queue ends empty");
        }
        SyncTesting.assertBothOutcomes("blocking timeout", owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }

    @Test
    void interruptRacingTheGrantEndsOwnedWithTheInterruptKeptOrInterrupted() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        int owned = 0;
        try (SyncTesting.Racer racer = new SyncTesting.Racer()) {
            for (int round = 0; round < ROUNDS; round++) {
                assertTrue(mutex.tryLock());
                AtomicBoolean raceOver = new AtomicBoolean();
                TestKit.Forked<Guard> blocked = fork("blocked", () -> {
                    Guard guard;
                    try {
                        guard = mutex.acquireBlocking();
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
                SyncTesting.awaitQueued(mutex, 1);
                racer.race(blocked.thread::interrupt, mutex::unlock, round % 64 - 32);
                raceOver.set(true);
                Guard guard = blocked.join();
                String where = "interrupt, round " + round + ": ";
                if (guard != null) {
                    assertTrue(mutex.isLocked(), where + "a returned guard owns the lock");
                    guard.close();
                    owned++;
                }
                assertFalse(mutex.isLocked(), where + "the lock ends free");
                assertEquals(0, mutex.queueLength(), where + "the queue ends empty");
            }
        }
        SyncTesting.assertBothOutcomes("interrupt", owned, ROUNDS);
        assertFreeAndUsable(mutex);
    }
}
