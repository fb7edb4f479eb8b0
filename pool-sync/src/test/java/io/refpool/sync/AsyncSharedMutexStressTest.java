package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.testkit.TestKit.BOUND;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Readers and writers of {@link AsyncSharedMutex} through every entry point at once — tries,
 * blocking and async acquires, timeouts, future and token cancellations — over a million
 * operations, with an invariant checked inside every critical section: never a writer together with
 * readers, never two writers. At the end every future has settled and the lock is free.
 *
 * <p>Seeded: the seed is in every failure message; rerun with {@code -Drefpool.stress.seed=...}.
 */
class AsyncSharedMutexStressTest {
    private static final int THREADS = 4;
    private static final int OPERATIONS_PER_THREAD = 250_000;

    private final AsyncSharedMutex lock = new AsyncSharedMutex();
    private final AtomicInteger readersInside = new AtomicInteger();
    private final AtomicInteger writersInside = new AtomicInteger();
    private final AtomicReference<String> firstViolation = new AtomicReference<>();
    private final AtomicLong asyncIssued = new AtomicLong();
    private final AtomicLong asyncSettled = new AtomicLong();
    private final AtomicLong criticalSections = new AtomicLong();

    private void violation(String what) {
        firstViolation.compareAndSet(null, what + " (" + lock + ")");
    }

    private void read() {
        readersInside.incrementAndGet();
        if (writersInside.get() != 0) {
            violation("a reader entered while a writer was inside");
        }
        if (lock.isWriteLocked() || lock.readers() == 0) {
            violation("a reader inside, but the lock says readers=" + lock.readers());
        }
        criticalSections.incrementAndGet();
        readersInside.decrementAndGet();
    }

    private void write() {
        if (writersInside.incrementAndGet() != 1) {
            violation("two writers inside");
        }
        if (readersInside.get() != 0) {
            violation("a writer entered while readers were inside");
        }
        if (!lock.isWriteLocked() || lock.readers() != 0) {
            violation("a writer inside, but the lock is not write-locked alone");
        }
        criticalSections.incrementAndGet();
        writersInside.decrementAndGet();
    }

    /** Tracks an async acquire until it settles; a granted one runs its section and releases. */
    private void track(CompletionStage<Guard> stage, boolean writer) {
        asyncIssued.incrementAndGet();
        stage.whenComplete((guard, failure) -> {
            try {
                if (guard != null) {
                    try (guard) {
                        if (writer) {
                            write();
                        } else {
                            read();
                        }
                    }
                }
            } finally {
                asyncSettled.incrementAndGet();
            }
        });
    }

    private void runOperations(SplittableRandom random) throws InterruptedException {
        for (int i = 0; i < OPERATIONS_PER_THREAD; i++) {
            int op = random.nextInt(1_000);
            if (op < 600) {
                if (lock.tryLockShared()) {
                    try {
                        read();
                    } finally {
                        lock.unlockShared();
                    }
                }
            } else if (op < 700) {
                track(lock.acquireShared(), false);
            } else if (op < 740) {
                if (lock.tryLock()) {
                    try {
                        write();
                    } finally {
                        lock.unlock();
                    }
                }
            } else if (op < 800) {
                track(lock.acquire(), true);
            } else if (op < 815) {
                try (Guard g = lock.acquireSharedBlocking()) {
                    read();
                }
            } else if (op < 825) {
                try (Guard g = lock.acquireBlocking()) {
                    write();
                }
            } else if (op < 840) {
                Duration timeout = Duration.ofNanos(random.nextLong(50_000));
                boolean writer = random.nextBoolean();
                Optional<Guard> g = writer ? lock.tryAcquire(timeout) : lock.tryAcquireShared(timeout);
                if (g.isPresent()) {
                    try (Guard held = g.get()) {
                        if (writer) {
                            write();
                        } else {
                            read();
                        }
                    }
                }
            } else if (op < 920) {
                boolean writer = random.nextBoolean();
                CompletionStage<Guard> stage = writer ? lock.acquire() : lock.acquireShared();
                track(stage, writer);
                stage.toCompletableFuture().cancel(true);
            } else {
                boolean writer = random.nextBoolean();
                CancellationSource source = new CancellationSource();
                CompletionStage<Guard> stage =
                        writer ? lock.acquire(source.token()) : lock.acquireShared(source.token());
                track(stage, writer);
                source.cancel();
            }
        }
    }

    @Test
    void readersAndWritersNeverOverlapAndEveryAcquireSettles() throws Exception {
        long seed = Long.getLong("refpool.stress.seed", System.nanoTime());
        String context = "seed " + seed;

        List<TestKit.Forked<Void>> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            SplittableRandom random = new SplittableRandom(seed + t);
            threads.add(TestKit.forkRun("stress-" + t, () -> runOperations(random)));
        }
        for (TestKit.Forked<Void> t : threads) {
            try {
                t.join();
            } catch (AssertionError e) {
                throw new AssertionError(context + ": " + e.getMessage(), e);
            }
        }
        await().atMost(BOUND).until(() -> asyncSettled.get() == asyncIssued.get());

        assertNull(firstViolation.get(), context);
        assertEquals(asyncIssued.get(), asyncSettled.get(), context + ": every future settles");
        assertEquals(0, readersInside.get(), context);
        assertEquals(0, writersInside.get(), context);
        assertTrue(criticalSections.get() > OPERATIONS_PER_THREAD, context + ": too few sections ran");
        assertFree(lock, context);
        CompletableFuture<Guard> after = lock.acquire().toCompletableFuture();
        assertTrue(after.isDone(), context + ": the lock works on");
        after.join().close();
    }
}
