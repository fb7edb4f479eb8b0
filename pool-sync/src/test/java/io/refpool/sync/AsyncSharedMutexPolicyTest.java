package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.awaitQueueLength;
import static io.refpool.sync.SharedMutexTesting.granted;
import static io.refpool.sync.SharedMutexTesting.guardOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The admission policy of {@link AsyncSharedMutex}: readers share, writers exclude, a waiting writer
 * holds back later readers, the head is served as a writer alone or a batch of readers, and neither
 * side starves. Every acquire is driven from the test thread, so the grant order is deterministic.
 */
class AsyncSharedMutexPolicyTest {

    @Test
    void readersShareTheLock() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> third = lock.acquireShared();

        assertTrue(granted(third));
        assertEquals(3, lock.readers());
        assertFalse(lock.isWriteLocked());
        assertFalse(lock.tryLock(), "a writer must not enter while readers hold");

        guardOf(third).close();
        lock.unlockShared();
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void writerExcludesReadersAndWriters() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());

        assertFalse(lock.tryLockShared());
        assertFalse(lock.tryLock());
        assertTrue(lock.tryAcquireShared().isEmpty());
        assertTrue(lock.tryAcquire().isEmpty());
        assertTrue(lock.isWriteLocked());
        assertEquals(0, lock.readers());

        lock.unlock();
        assertFree(lock);
    }

    @Test
    void newReaderWaitsWhileAWriterWaits() throws InterruptedException {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        assertFalse(granted(writer), "readers hold: the writer waits");

        assertFalse(lock.tryLockShared(), "a reader must not barge past a waiting writer");
        assertTrue(lock.tryAcquireShared().isEmpty());
        assertTrue(lock.tryAcquireShared(Duration.ZERO).isEmpty());
        CompletionStage<Guard> reader = lock.acquireShared();
        assertFalse(granted(reader), "a reader arriving after a waiting writer queues behind it");
        assertEquals(1, lock.readers());
        assertEquals(2, lock.queueLength());

        lock.unlockShared();
        assertTrue(granted(writer));
        assertFalse(granted(reader));
        guardOf(writer).close();
        assertTrue(granted(reader));
        guardOf(reader).close();
        assertFree(lock);
    }

    @Test
    void writerGoesFirstThenTheBatchOfReadersQueuedBeforeTheNextWriter() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> w1 = lock.acquire();
        List<CompletionStage<Guard>> batch = List.of(lock.acquireShared(), lock.acquireShared(), lock.acquireShared());
        CompletionStage<Guard> w2 = lock.acquire();
        List<CompletionStage<Guard>> nextBatch = List.of(lock.acquireShared(), lock.acquireShared());

        lock.unlockShared();
        assertTrue(granted(w1));
        batch.forEach(r -> assertFalse(granted(r)));

        guardOf(w1).close();
        batch.forEach(r -> assertTrue(granted(r), "every reader queued before the next writer enters"));
        assertEquals(3, lock.readers());
        assertFalse(granted(w2));
        nextBatch.forEach(r -> assertFalse(granted(r), "readers behind the next writer stay queued"));

        guardOf(batch.get(0)).close();
        guardOf(batch.get(1)).close();
        assertFalse(granted(w2), "the writer waits for the last reader of the batch");
        guardOf(batch.get(2)).close();
        assertTrue(granted(w2));

        guardOf(w2).close();
        nextBatch.forEach(r -> assertTrue(granted(r)));
        nextBatch.forEach(r -> guardOf(r).close());
        assertFree(lock);
    }

    @Test
    void batchIsAdmittedInOneStepBeforeAnyOfItsContinuationsRuns() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        List<Integer> readersSeenByContinuations = new CopyOnWriteArrayList<>();
        List<CompletionStage<Guard>> batch = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            CompletionStage<Guard> r = lock.acquireShared();
            r.thenRun(() -> readersSeenByContinuations.add(lock.readers()));
            batch.add(r);
        }

        lock.unlock();

        assertEquals(List.of(4, 4, 4, 4), readersSeenByContinuations);
        batch.forEach(r -> guardOf(r).close());
        assertFree(lock);
    }

    @Test
    void writersAreServedInArrivalOrderOneAtATime() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<CompletionStage<Guard>> writers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int id = i;
            CompletionStage<Guard> w = lock.acquire();
            w.thenRun(() -> order.add(id));
            writers.add(w);
        }

        lock.unlock();
        for (int i = 0; i < 5; i++) {
            assertEquals(i + 1, order.size(), "exactly one writer holds at a time");
            assertTrue(lock.isWriteLocked());
            guardOf(writers.get(i)).close();
        }
        assertEquals(List.of(0, 1, 2, 3, 4), order);
        assertFree(lock);
    }

    @Test
    void overlappingReaderStreamDoesNotStarveAWaitingWriter() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        ArrayDeque<Guard> holding = new ArrayDeque<>();
        holding.add(guardOf(lock.acquireShared()));
        holding.add(guardOf(lock.acquireShared()));

        for (int round = 0; round < 200; round++) {
            CompletionStage<Guard> writer = lock.acquire();
            AtomicInteger readerGrantsBeforeWriter = new AtomicInteger();
            List<CompletionStage<Guard>> queuedBehindWriter = new ArrayList<>();
            // Readers keep arriving while earlier ones leave, so readers hold the lock without a
            // break: under reader preference the writer would never get in.
            int arrivals = 0;
            while (!granted(writer) && arrivals < 1_000 && !holding.isEmpty()) {
                CompletionStage<Guard> reader = lock.acquireShared();
                arrivals++;
                if (granted(reader)) {
                    readerGrantsBeforeWriter.incrementAndGet();
                    holding.add(guardOf(reader));
                } else {
                    reader.thenRun(() -> {
                        if (!granted(writer)) {
                            readerGrantsBeforeWriter.incrementAndGet();
                        }
                    });
                    queuedBehindWriter.add(reader);
                }
                holding.poll().close();
            }
            assertTrue(granted(writer), "round " + round + ": the writer starved behind " + arrivals + " readers");
            assertEquals(0, readerGrantsBeforeWriter.get(), "round " + round + ": readers granted before the writer");
            assertEquals(2, arrivals, "the writer waits only for the two readers that held when it arrived");

            guardOf(writer).close();
            for (CompletionStage<Guard> r : queuedBehindWriter) {
                holding.add(guardOf(r));
            }
        }
        holding.forEach(Guard::close);
        assertFree(lock);
    }

    @Test
    void writerStreamDoesNotStarveAQueuedReader() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        ArrayDeque<Guard> holding = new ArrayDeque<>();
        holding.add(guardOf(lock.acquire()));

        for (int round = 0; round < 200; round++) {
            CompletionStage<Guard> reader = lock.acquireShared();
            AtomicInteger writerGrantsBeforeReader = new AtomicInteger();
            ArrayDeque<CompletionStage<Guard>> writers = new ArrayDeque<>();
            // Writers keep arriving; the writer holding leaves only after the next one queued, so
            // under writer preference without FIFO the reader would never get in.
            int arrivals = 0;
            while (!granted(reader) && arrivals < 1_000) {
                CompletionStage<Guard> w = lock.acquire();
                arrivals++;
                w.thenRun(() -> {
                    if (!granted(reader)) {
                        writerGrantsBeforeReader.incrementAndGet();
                    }
                });
                writers.add(w);
                Guard leaving = holding.poll();
                if (leaving == null) {
                    leaving = guardOf(writers.poll());
                }
                leaving.close();
            }
            assertTrue(granted(reader), "round " + round + ": the reader starved behind " + arrivals + " writers");
            assertEquals(0, writerGrantsBeforeReader.get(), "round " + round + ": writers granted before the reader");
            assertEquals(1, arrivals, "the reader waits only for the writer that held when it arrived");

            guardOf(reader).close();
            holding.add(guardOf(writers.poll()));
        }
        holding.forEach(Guard::close);
        assertFree(lock);
    }

    @Test
    void tryLockFailsWhileAnyoneIsQueuedEvenIfTheLockIsReadable() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();

        assertFalse(lock.tryLock());
        assertFalse(lock.tryLockShared());

        lock.unlockShared();
        guardOf(writer).close();
        assertFree(lock);
    }

    @Test
    void blockingReaderWaitsBehindABlockingWriterThatWaitsForAReader() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        List<String> entries = new CopyOnWriteArrayList<>();
        Guard first = lock.acquireSharedBlocking();

        TestKit.Forked<Void> writer = TestKit.forkRun("writer", () -> {
            try (Guard g = lock.acquireBlocking()) {
                entries.add("writer readers=" + lock.readers());
            }
        });
        awaitQueueLength(lock, 1);
        TestKit.Forked<Void> reader = TestKit.forkRun("reader", () -> {
            try (Guard g = lock.acquireSharedBlocking()) {
                entries.add("reader writeLocked=" + lock.isWriteLocked());
            }
        });
        awaitQueueLength(lock, 2);
        assertTrue(entries.isEmpty());

        first.close();
        writer.join();
        reader.join();
        assertEquals(List.of("writer readers=0", "reader writeLocked=false"), entries);
        assertFree(lock);
    }

    @Test
    void guardCloseReleasesExactlyOnce() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        Guard a = guardOf(lock.acquireShared());
        Guard b = guardOf(lock.acquireShared());
        a.close();
        a.close();
        assertEquals(1, lock.readers(), "a second close of one guard must not release another reader");
        b.close();
        assertFree(lock);

        Guard w = lock.tryAcquire().orElseThrow();
        w.close();
        Guard next = lock.tryAcquire().orElseThrow();
        w.close();
        assertTrue(lock.isWriteLocked(), "a stale guard must not release a later owner");
        next.close();
        assertFree(lock);
    }
}
