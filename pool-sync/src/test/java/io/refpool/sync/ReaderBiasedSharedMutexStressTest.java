package io.refpool.sync;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Readers and writers of {@link ReaderBiasedSharedMutex} through every entry point at once: biased
 * tries (some handed to another thread to give back), queued shared acquires after a refusal,
 * exclusive tries, blocking and async exclusive acquires. Inside every critical section: never a
 * writer together with readers, never two writers. At the end the lock is free.
 *
 * <p>Seeded: the seed is in every failure message; rerun with {@code -Drefpool.stress.seed=...}.
 */
class ReaderBiasedSharedMutexStressTest {
    private static final int THREADS = 4;
    private static final int OPERATIONS_PER_THREAD = 100_000;

    private final ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();
    private final AtomicInteger readersInside = new AtomicInteger();
    private final AtomicInteger writersInside = new AtomicInteger();
    private final AtomicReference<String> firstViolation = new AtomicReference<>();
    private final AtomicLong writes = new AtomicLong();
    /** Biased holds handed to whichever thread gives them back next. */
    private final ConcurrentLinkedQueue<Object> handedHolds = new ConcurrentLinkedQueue<>();

    private void violation(String what) {
        firstViolation.compareAndSet(null, what + " (" + lock + ")");
    }

    private void enterAsReader() {
        readersInside.incrementAndGet();
        if (writersInside.get() != 0) {
            violation("a reader entered while a writer was inside");
        }
    }

    private void write() {
        if (writersInside.incrementAndGet() != 1) {
            violation("two writers inside");
        }
        if (readersInside.get() != 0) {
            violation("a writer entered while " + readersInside.get() + " readers were inside");
        }
        writes.incrementAndGet();
        writersInside.decrementAndGet();
    }

    /** Gives back every handed hold: done before any wait, so no waiter waits on its own hand. */
    private void giveBackHandedHolds() {
        while (handedHolds.poll() != null) {
            readersInside.decrementAndGet();
            lock.unlockShared();
        }
    }

    private void operate(SplittableRandom random) throws Exception {
        int choice = random.nextInt(100);
        if (choice < 80) {
            if (lock.tryLockShared()) {
                enterAsReader();
                if (random.nextInt(4) == 0) {
                    handedHolds.add(Boolean.TRUE); // given back later, by any thread
                    return;
                }
                readersInside.decrementAndGet();
                lock.unlockShared();
                return;
            }
            giveBackHandedHolds();
            try (Guard shared = lock.acquireSharedBlocking(CancellationToken.none())) {
                enterAsReader();
                readersInside.decrementAndGet();
            }
            return;
        }
        if (choice < 85) {
            if (lock.tryLock()) {
                write();
                lock.unlock();
            }
            return;
        }
        giveBackHandedHolds();
        if (choice < 93) {
            try (Guard exclusive = lock.acquireBlocking()) {
                write();
            }
            return;
        }
        try (Guard exclusive = lock.acquire().toCompletableFuture().get(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
            write();
        }
    }

    @Test
    void readersAndWritersNeverOverlap() throws Exception {
        long seed = Long.getLong("refpool.stress.seed", System.nanoTime());
        SplittableRandom root = new SplittableRandom(seed);
        List<Forked<Void>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            SplittableRandom random = root.split();
            workers.add(TestKit.forkRun("stress-" + t, () -> {
                for (int i = 0; i < OPERATIONS_PER_THREAD && firstViolation.get() == null; i++) {
                    operate(random);
                }
                giveBackHandedHolds();
            }));
        }
        for (Forked<Void> worker : workers) {
            worker.join();
        }
        giveBackHandedHolds();
        assertNull(firstViolation.get(), () -> "seed " + seed + ": " + firstViolation.get());
        assertEquals(0, lock.readers(), () -> "seed " + seed + ": " + lock);
        assertFalse(lock.isWriteLocked(), () -> "seed " + seed + ": " + lock);
        assertEquals(0, lock.queueLength(), () -> "seed " + seed + ": " + lock);
    }
}
