package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Randomized contention: threads mix blocking, timed, async and try acquires with cancellation by
 * the future, by a token, by {@code orTimeout} and by interrupts from a separate thread. During the
 * run an owner count checked inside every critical section never exceeds the lock's capacity; at the
 * end every future has settled, every guard was closed, and the lock is free with its permits exact.
 *
 * <p>The mix is drawn from a seed printed with every failure (and taken from the system property
 * {@code refpool.stress.seed} when set), so a failing mix can be replayed; the interleaving itself
 * is the scheduler's.
 */
class RandomizedContentionStressTest {
    private static final Duration RUN = Duration.ofMillis(1_500);
    private static final int WORKERS = 4;

    /** The lock under test, reduced to what the workload needs. */
    private interface Subject {
        int capacity();

        /** {@return how many units the next acquire asks for} */
        int size(SplittableRandom random);

        Guard acquireBlocking(int n) throws InterruptedException;

        Optional<Guard> tryAcquire(int n, Duration timeout) throws InterruptedException;

        Optional<Guard> tryAcquire(int n);

        CompletionStage<Guard> acquire(int n, CancellationToken token);

        void assertIdle(String seed);
    }

    private static final class Run {
        final long seed = Long.getLong("refpool.stress.seed", System.nanoTime());
        final AtomicInteger held = new AtomicInteger();
        final AtomicReference<String> violation = new AtomicReference<>();
        final Queue<CompletableFuture<?>> futures = new ConcurrentLinkedQueue<>();
        final AtomicInteger grants = new AtomicInteger();
        final Subject subject;

        Run(Subject subject) {
            this.subject = subject;
        }

        String seed() {
            return "seed " + seed + " (rerun with -Drefpool.stress.seed=" + seed + ")";
        }

        /** The critical section: holds {@code n} units, checks the capacity, gives them back. */
        void critical(int n) {
            int now = held.addAndGet(n);
            if (now > subject.capacity()) {
                violation.compareAndSet(null, now + " units held at once, capacity " + subject.capacity());
            }
            grants.incrementAndGet();
            Thread.yield();
            held.addAndGet(-n);
        }

        void work(int worker, long deadline) {
            SplittableRandom random = new SplittableRandom(seed + worker);
            while (System.nanoTime() - deadline < 0) {
                int n = subject.size(random);
                try {
                    switch (random.nextInt(6)) {
                        case 0:
                            try (Guard guard = subject.acquireBlocking(n)) {
                                critical(n);
                            }
                            break;
                        case 1:
                            Optional<Guard> timed = subject.tryAcquire(n, Duration.ofNanos(random.nextLong(200_000)));
                            if (timed.isPresent()) {
                                try (Guard guard = timed.get()) {
                                    critical(n);
                                }
                            }
                            break;
                        case 2:
                            Optional<Guard> now = subject.tryAcquire(n);
                            if (now.isPresent()) {
                                try (Guard guard = now.get()) {
                                    critical(n);
                                }
                            }
                            break;
                        case 3:
                            asyncThenCancelFuture(n, random);
                            break;
                        case 4:
                            asyncWithToken(n, random);
                            break;
                        default:
                            asyncWithOrTimeout(n, random);
                            break;
                    }
                } catch (InterruptedException e) {
                    // the wait was cancelled by the interrupter; nothing is owned
                }
            }
            Thread.interrupted();
        }

        private CompletableFuture<Guard> track(CompletionStage<Guard> stage, int n) {
            CompletableFuture<Guard> future = stage.toCompletableFuture();
            futures.add(future);
            futures.add(future.whenComplete((guard, failure) -> {
                if (guard != null) {
                    critical(n);
                    guard.close();
                }
            }));
            return future;
        }

        private void asyncThenCancelFuture(int n, SplittableRandom random) {
            CompletableFuture<Guard> future = track(subject.acquire(n, CancellationToken.none()), n);
            spin(random.nextInt(200));
            future.cancel(random.nextBoolean());
        }

        private void asyncWithToken(int n, SplittableRandom random) {
            CancellationSource source = new CancellationSource();
            track(subject.acquire(n, source.token()), n);
            spin(random.nextInt(200));
            if (random.nextBoolean()) {
                source.cancel();
            }
            source.close();
        }

        private void asyncWithOrTimeout(int n, SplittableRandom random) {
            track(subject.acquire(n, CancellationToken.none()), n)
                    .orTimeout(random.nextInt(100), TimeUnit.MICROSECONDS);
        }

        private static void spin(int iterations) {
            for (int i = 0; i < iterations; i++) {
                Thread.onSpinWait();
            }
        }

        void execute() throws Exception {
            long deadline = System.nanoTime() + RUN.toNanos();
            List<TestKit.Forked<Void>> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                int worker = w;
                workers.add(TestKit.forkRun("worker-" + w, () -> work(worker, deadline)));
            }
            SplittableRandom random = new SplittableRandom(seed - 1);
            while (System.nanoTime() - deadline < 0) {
                workers.get(random.nextInt(WORKERS)).thread.interrupt();
                Thread.sleep(0, 200_000); // pacing of the interrupter, not a wait for a condition
            }
            for (TestKit.Forked<Void> w : workers) {
                try {
                    w.join();
                } catch (Exception | AssertionError e) {
                    throw new AssertionError(w.thread.getName() + " failed; " + seed(), e);
                }
            }
            TestKit.eventually().until(() -> futures.stream().allMatch(CompletableFuture::isDone));

            assertEquals(null, violation.get(), seed());
            assertEquals(0, held.get(), seed());
            assertTrue(grants.get() > 0, "nothing was ever granted; " + seed());
            subject.assertIdle(seed());
            System.out.printf("%s: %d grants, %d futures; %s%n", subject, grants.get(), futures.size(), seed());
        }
    }

    @Test
    void mutexUnderRandomContentionNeverHasTwoOwnersAndEndsFree() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        new Run(new Subject() {
                    @Override
                    public int capacity() {
                        return 1;
                    }

                    @Override
                    public int size(SplittableRandom random) {
                        return 1;
                    }

                    @Override
                    public Guard acquireBlocking(int n) throws InterruptedException {
                        return mutex.acquireBlocking();
                    }

                    @Override
                    public Optional<Guard> tryAcquire(int n, Duration timeout) throws InterruptedException {
                        return mutex.tryAcquire(timeout);
                    }

                    @Override
                    public Optional<Guard> tryAcquire(int n) {
                        return mutex.tryAcquire();
                    }

                    @Override
                    public CompletionStage<Guard> acquire(int n, CancellationToken token) {
                        return mutex.acquire(token);
                    }

                    @Override
                    public void assertIdle(String seed) {
                        assertFalse(mutex.isLocked(), seed);
                        assertEquals(0, mutex.queueLength(), seed);
                        assertTrue(mutex.tryLock(), seed);
                        mutex.unlock();
                    }

                    @Override
                    public String toString() {
                        return "mutex";
                    }
                })
                .execute();
    }

    @Test
    void semaphoreUnderRandomContentionNeverExceedsItsPermitsAndEndsExact() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        new Run(new Subject() {
                    @Override
                    public int capacity() {
                        return 3;
                    }

                    @Override
                    public int size(SplittableRandom random) {
                        return 1 + random.nextInt(3);
                    }

                    @Override
                    public Guard acquireBlocking(int n) throws InterruptedException {
                        return semaphore.acquireBlocking(n);
                    }

                    @Override
                    public Optional<Guard> tryAcquire(int n, Duration timeout) throws InterruptedException {
                        return semaphore.tryAcquire(n, timeout);
                    }

                    @Override
                    public Optional<Guard> tryAcquire(int n) {
                        return semaphore.tryAcquire(n);
                    }

                    @Override
                    public CompletionStage<Guard> acquire(int n, CancellationToken token) {
                        return semaphore.acquire(n, token);
                    }

                    @Override
                    public void assertIdle(String seed) {
                        assertEquals(0, semaphore.queueLength(), seed);
                        assertEquals(3, semaphore.availablePermits(), seed);
                        assertTrue(semaphore.tryAcquirePermits(3), seed);
                        semaphore.release(3);
                    }

                    @Override
                    public String toString() {
                        return "semaphore";
                    }
                })
                .execute();
    }
}
