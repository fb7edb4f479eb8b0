package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.awaitGuard;
import static io.refpool.sync.SharedMutexTesting.future;
import static io.refpool.sync.SharedMutexTesting.granted;
import static io.refpool.sync.SharedMutexTesting.guardOf;
import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A release that grants waiter X races, behind a barrier, with a cancellation of X, 1,000 times per
 * kind of cancellation and for X a reader and a writer. One CAS decides: either X owns the lock, or
 * its share goes to the waiter behind it. The lock always ends free with no reader counted, and
 * each race ends both ways within its rounds.
 */
class AsyncSharedMutexGrantCancelRaceTest {
    private static final int ROUNDS = 1_000;
    /** Each racer waits a random number of spins after the barrier, so the two meet at every point. */
    private static final int JITTER_SPINS = 64;
    /** The longest head start the canceller is given; bounds a round's time on a loaded machine. */
    private static final int MAX_DELAY_SPINS = 50_000;

    private static ExecutorService racers;

    @BeforeAll
    static void startRacers() {
        racers = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "racer");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void stopRacers() throws InterruptedException {
        racers.shutdown();
        assertTrue(racers.awaitTermination(BOUND.toMillis(), TimeUnit.MILLISECONDS));
    }

    /** What X is: a reader behind a writer that holds, or a writer behind a reader that holds. */
    enum Role {
        READER,
        WRITER;

        void hold(AsyncSharedMutex lock) {
            assertTrue(this == READER ? lock.tryLock() : lock.tryLockShared());
        }

        void releaseHolder(AsyncSharedMutex lock) {
            if (this == READER) {
                lock.unlock();
            } else {
                lock.unlockShared();
            }
        }

        CompletionStage<Guard> acquire(AsyncSharedMutex lock) {
            return this == READER ? lock.acquireShared() : lock.acquire();
        }

        CompletionStage<Guard> acquire(AsyncSharedMutex lock, CancellationToken token) {
            return this == READER ? lock.acquireShared(token) : lock.acquire(token);
        }

        Guard acquireBlocking(AsyncSharedMutex lock, CancellationToken token) throws InterruptedException {
            return this == READER ? lock.acquireSharedBlocking(token) : lock.acquireBlocking(token);
        }

        CompletionStage<Guard> acquireSuccessor(AsyncSharedMutex lock) {
            return this == READER ? lock.acquire() : lock.acquireShared();
        }
    }

    /** How the caller of an async acquire gives up on it. */
    enum AsyncCancel {
        FUTURE_CANCEL,
        FUTURE_COMPLETE_EXCEPTIONALLY,
        FUTURE_COMPLETE,
        TOKEN
    }

    /** How a blocked acquire is given up on. */
    enum BlockingCancel {
        INTERRUPT,
        TOKEN
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void futureCancelRacingTheGrantNeverLosesTheLock(Role role) throws Exception {
        raceAsync(role, AsyncCancel.FUTURE_CANCEL);
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void futureCompleteExceptionallyRacingTheGrantNeverLosesTheLock(Role role) throws Exception {
        raceAsync(role, AsyncCancel.FUTURE_COMPLETE_EXCEPTIONALLY);
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void futureCompleteRacingTheGrantNeverLosesTheLock(Role role) throws Exception {
        raceAsync(role, AsyncCancel.FUTURE_COMPLETE);
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void tokenCancelRacingTheGrantNeverLosesTheLock(Role role) throws Exception {
        raceAsync(role, AsyncCancel.TOKEN);
    }

    private static void raceAsync(Role role, AsyncCancel how) throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        RaceBalance balance = new RaceBalance();
        for (int round = 0; round < ROUNDS; round++) {
            SpinBarrier start = new SpinBarrier();
            String where = role + " waiter, " + how + ", seed " + seed + ", round " + round;
            int releaseSpins = random.nextInt(JITTER_SPINS);
            int cancelSpins = balance.cancelDelay(random);
            role.hold(lock);
            CancellationSource source = new CancellationSource();
            CompletionStage<Guard> x =
                    how == AsyncCancel.TOKEN ? role.acquire(lock, source.token()) : role.acquire(lock);
            CompletionStage<Guard> successor = role.acquireSuccessor(lock);
            assertFalse(granted(x), where);

            CompletableFuture<Void> release = CompletableFuture.runAsync(
                    () -> {
                        await(start);
                        spin(releaseSpins);
                        role.releaseHolder(lock);
                    },
                    racers);
            CompletableFuture<Boolean> cancel = CompletableFuture.supplyAsync(
                    () -> {
                        await(start);
                        spin(cancelSpins);
                        CompletableFuture<Guard> f = future(x);
                        switch (how) {
                            case FUTURE_CANCEL:
                                return f.cancel(true);
                            case FUTURE_COMPLETE_EXCEPTIONALLY:
                                return f.completeExceptionally(new IllegalStateException("caller gave up"));
                            case FUTURE_COMPLETE:
                                return f.complete(null);
                            default:
                                source.cancel(); // a cancel that wins settles the future before returning
                                return f.isCompletedExceptionally();
                        }
                    },
                    racers);
            release.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            boolean cancelled = cancel.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);

            balance.record(cancelled);
            if (cancelled) {
                assertTrue(future(x).isDone(), where);
                assertTrue(granted(successor), where + ": the cancelled waiter's share went to the next one");
            } else {
                assertTrue(granted(x), where + ": a cancel that lost leaves the caller owning the lock");
                Guard g = guardOf(x);
                assertNotNull(g, where);
                assertFalse(granted(successor), where + ": the successor waits for X");
                g.close();
                assertTrue(granted(successor), where);
            }
            guardOf(successor).close();
            assertFree(lock, where);
            assertEquals(0, lock.readers(), where);
        }
        SyncTesting.assertBothOutcomes(role + " waiter, " + how + ", seed " + seed, balance.granted, ROUNDS);
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void interruptRacingTheGrantNeverLosesTheLock(Role role) throws Exception {
        raceBlocking(role, BlockingCancel.INTERRUPT);
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void tokenCancelRacingTheGrantOfABlockedWaiterNeverLosesTheLock(Role role) throws Exception {
        raceBlocking(role, BlockingCancel.TOKEN);
    }

    private static void raceBlocking(Role role, BlockingCancel how) throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        RaceBalance balance = new RaceBalance();
        for (int round = 0; round < ROUNDS; round++) {
            SpinBarrier start = new SpinBarrier();
            String where = role + " waiter, " + how + ", seed " + seed + ", round " + round;
            int releaseSpins = random.nextInt(JITTER_SPINS);
            int cancelSpins = balance.cancelDelay(random);
            role.hold(lock);
            CompletableFuture<Guard> outcome = new CompletableFuture<>();
            CancellationSource source = new CancellationSource();
            Thread x = new Thread(() -> {
                try {
                    outcome.complete(role.acquireBlocking(lock, source.token()));
                } catch (InterruptedException | CancellationException e) {
                    outcome.complete(null);
                } catch (Throwable t) {
                    outcome.completeExceptionally(t);
                }
            });
            x.setDaemon(true);
            x.start();
            SharedMutexTesting.awaitQueueLength(lock, 1);
            CompletionStage<Guard> successor = role.acquireSuccessor(lock);

            CompletableFuture<Void> release = CompletableFuture.runAsync(
                    () -> {
                        await(start);
                        spin(releaseSpins);
                        role.releaseHolder(lock);
                    },
                    racers);
            CompletableFuture<Void> interrupt = CompletableFuture.runAsync(
                    () -> {
                        await(start);
                        spin(cancelSpins);
                        if (how == BlockingCancel.INTERRUPT) {
                            x.interrupt();
                        } else {
                            source.cancel();
                        }
                    },
                    racers);
            release.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            interrupt.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            Guard g = outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);

            balance.record(g == null);
            if (g == null) {
                assertTrue(granted(successor), where + ": the cancelled waiter's share went on");
            } else {
                assertFalse(granted(successor), where);
                g.close();
            }
            awaitGuard(successor).close();
            x.join(BOUND.toMillis());
            assertFree(lock, where);
        }
        SyncTesting.assertBothOutcomes(role + " waiter, " + how + ", seed " + seed, balance.granted, ROUNDS);
    }

    @ParameterizedTest(name = "{0} waiter")
    @EnumSource(Role.class)
    void timeoutRacingTheGrantNeverLosesTheLock(Role role) throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        int owned = 0;
        for (int round = 0; round < ROUNDS; round++) {
            SpinBarrier start = new SpinBarrier();
            String where = role + " waiter, timeout, seed " + seed + ", round " + round;
            role.hold(lock);
            // the timeout is about 100 us; the release is swept from at once to far past it, so early
            // rounds of a sweep are granted, late ones time out, and those between race the timer
            Duration timeout = Duration.ofNanos(random.nextLong(80_000, 120_000));
            long releaseDelay = (round % 50) * 40_000L;
            CompletableFuture<Optional<Guard>> x = CompletableFuture.supplyAsync(
                    () -> {
                        await(start);
                        try {
                            return role == Role.READER ? lock.tryAcquireShared(timeout) : lock.tryAcquire(timeout);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                    },
                    racers);
            CompletableFuture<Void> release = CompletableFuture.runAsync(
                    () -> {
                        await(start);
                        SyncTesting.spinFor(releaseDelay);
                        role.releaseHolder(lock);
                    },
                    racers);
            release.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            Optional<Guard> g = x.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);

            owned += g.isPresent() ? 1 : 0;
            g.ifPresent(Guard::close);
            assertFree(lock, where);
            assertEquals(0, lock.readers(), where);
        }
        SyncTesting.assertBothOutcomes(role + " waiter, timeout, seed " + seed, owned, ROUNDS);
    }

    /**
     * Steers the canceller's head start so that the two racers keep meeting near the decisive CAS:
     * each cancel that wins delays the next one a little, each grant that wins advances it.
     */
    private static final class RaceBalance {
        private int delay;
        int granted;

        int cancelDelay(SplittableRandom random) {
            return Math.max(0, delay + random.nextInt(-JITTER_SPINS, JITTER_SPINS + 1));
        }

        void record(boolean cancelWon) {
            granted += cancelWon ? 0 : 1;
            int step = 4 + delay / 8;
            delay = cancelWon ? Math.min(MAX_DELAY_SPINS, delay + step) : Math.max(0, delay - step);
        }
    }

    private static void spin(int spins) {
        for (int i = 0; i < spins; i++) {
            Thread.onSpinWait();
        }
    }

    private static void await(SpinBarrier barrier) {
        barrier.arriveAndSpin();
    }

    /**
     * Two racers meet here and leave together: both spin (yielding), so neither has to be unparked
     * by the other, which would give the last to arrive a head start of many microseconds.
     */
    private static final class SpinBarrier {
        private final AtomicInteger arrived = new AtomicInteger();

        void arriveAndSpin() {
            arrived.incrementAndGet();
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (arrived.get() < 2) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the other racer never arrived");
                }
                Thread.yield(); // with fewer cores than racers, let the other one run
            }
        }
    }
}
