package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.awaitGuard;
import static io.refpool.sync.SharedMutexTesting.awaitQueueLength;
import static io.refpool.sync.SharedMutexTesting.future;
import static io.refpool.sync.SharedMutexTesting.granted;
import static io.refpool.sync.SharedMutexTesting.guardOf;
import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Cancelling a waiting reader or writer of {@link AsyncSharedMutex} never loses or strands the
 * lock: a cancelled writer that held readers back re-admits them, and a cancel that wins after a
 * release picked a batch of readers or a writer passes its share on. What every primitive shares
 * (a cancel that loses leaves the caller owning the lock, tokens, races) is in {@link
 * WaitCancellationTest}, {@link WaitTokenCancellationTest} and {@link GrantVersusCancelRaceTest}.
 */
class AsyncSharedMutexCancellationTest {

    @Test
    void cancelledWaitingWriterReadmitsTheReadersQueuedBehindIt() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        List<CompletionStage<Guard>> readers = List.of(lock.acquireShared(), lock.acquireShared());
        readers.forEach(r -> assertFalse(granted(r)));

        assertTrue(future(writer).cancel(true));

        assertTrue(future(writer).isCancelled());
        readers.forEach(r -> assertTrue(granted(r), "readers held back only by the writer enter at once"));
        assertEquals(3, lock.readers());
        assertEquals(0, lock.queueLength());
        assertTrue(lock.tryLockShared(), "with nobody waiting, new readers enter again");
        lock.unlockShared();

        readers.forEach(r -> guardOf(r).close());
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void cancelledWaitingWriterWakesTheParkedReadersBehindIt() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        CountDownLatch bothInside = new CountDownLatch(2);
        CountDownLatch leave = new CountDownLatch(1);
        List<TestKit.Forked<Void>> readers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            readers.add(TestKit.forkRun("parked reader " + i, () -> {
                try (Guard g = lock.acquireSharedBlocking()) {
                    bothInside.countDown();
                    assertTrue(leave.await(TestKit.BOUND.toMillis(), TimeUnit.MILLISECONDS));
                }
            }));
            awaitQueueLength(lock, 2 + i);
        }

        assertTrue(future(writer).cancel(true));

        assertTrue(bothInside.await(TestKit.BOUND.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(3, lock.readers(), "both parked readers share the lock with the first");
        leave.countDown();
        for (TestKit.Forked<Void> r : readers) {
            r.join();
        }
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void cancelledWriterReadmitsReadersOnlyUpToTheNextWriter() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> w1 = lock.acquire();
        CompletionStage<Guard> r1 = lock.acquireShared();
        CompletionStage<Guard> w2 = lock.acquire();
        CompletionStage<Guard> r2 = lock.acquireShared();

        assertTrue(future(w1).cancel(true));

        assertTrue(granted(r1));
        assertFalse(granted(w2));
        assertFalse(granted(r2), "a reader behind the next waiting writer stays behind it");
        assertEquals(2, lock.queueLength());

        lock.unlockShared();
        guardOf(r1).close();
        assertTrue(granted(w2));
        guardOf(w2).close();
        guardOf(r2).close();
        assertFree(lock);
    }

    @Test
    void cancelledWriterBehindAHoldingWriterAdmitsNobodyEarly() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        CompletionStage<Guard> w2 = lock.acquire();
        CompletionStage<Guard> reader = lock.acquireShared();

        assertTrue(future(w2).cancel(true));

        assertFalse(granted(reader), "the holding writer still excludes the reader");
        assertEquals(1, lock.queueLength());
        lock.unlock();
        assertTrue(granted(reader));
        guardOf(reader).close();
        assertFree(lock);
    }

    /** IBM asyncutil's {@code FairAsyncReadWriteLock} fails an assertion in this sequence. */
    @Test
    void writerCancelledWhileAReaderHoldsLetsTheReaderBehindItInAndAWriterLockAfterwards() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        Guard holder = guardOf(lock.acquireShared());
        CompletionStage<Guard> writer = lock.acquire();
        CompletionStage<Guard> reader = lock.acquireShared();

        assertTrue(future(writer).cancel(true));
        holder.close();

        assertTrue(granted(reader), "the reader queued behind the cancelled writer is granted");
        guardOf(reader).close();
        CompletionStage<Guard> nextWriter = lock.acquire();
        assertTrue(granted(nextWriter), "a writer can then lock");
        guardOf(nextWriter).close();
        assertFree(lock);
    }

    @Test
    void readerCancelledAfterAReleasePoppedItDoesNotStallTheBatchOrTheNextWriter() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        List<CompletionStage<Guard>> batch = List.of(lock.acquireShared(), lock.acquireShared(), lock.acquireShared());
        CompletionStage<Guard> nextWriter = lock.acquire();

        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", lock::unlock);
        PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
        SyncTesting.queueOf(lock).setHooks(hooks);
        releaser.start();
        hooks.awaitArrival(); // the batch is popped and counted as readers; no grant CAS yet
        assertEquals(3, lock.readers());
        assertTrue(future(batch.get(0)).cancel(true), "the cancel wins: the grant has not happened");
        hooks.proceed();
        releaser.join();
        SyncTesting.queueOf(lock).setHooks(null);

        assertTrue(future(batch.get(0)).isCancelled());
        assertTrue(granted(batch.get(1)));
        assertTrue(granted(batch.get(2)));
        assertEquals(2, lock.readers(), "the cancelled reader's share was given back");
        assertFalse(granted(nextWriter));

        guardOf(batch.get(1)).close();
        guardOf(batch.get(2)).close();
        assertTrue(granted(nextWriter), "the next writer is not stalled by the cancelled reader");
        guardOf(nextWriter).close();
        assertFree(lock);
    }

    @Test
    void wholeBatchCancelledAfterAReleasePoppedItHandsTheLockToTheNextWriter() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        List<CompletionStage<Guard>> batch = List.of(lock.acquireShared(), lock.acquireShared());
        CompletionStage<Guard> nextWriter = lock.acquire();

        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", lock::unlock);
        PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
        SyncTesting.queueOf(lock).setHooks(hooks);
        releaser.start();
        hooks.awaitArrival();
        batch.forEach(r -> assertTrue(future(r).cancel(true)));
        hooks.proceed();
        releaser.join();
        SyncTesting.queueOf(lock).setHooks(null);

        assertTrue(granted(nextWriter), "the last cancelled reader's share hands the lock on");
        assertEquals(0, lock.readers());
        guardOf(nextWriter).close();
        assertFree(lock);
    }

    @Test
    void writerCancelledAfterAReleasePoppedItPassesTheLockToTheReadersBehindIt() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        List<CompletionStage<Guard>> readers = List.of(lock.acquireShared(), lock.acquireShared());

        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", lock::unlockShared);
        PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
        SyncTesting.queueOf(lock).setHooks(hooks);
        releaser.start();
        hooks.awaitArrival();
        assertTrue(lock.isWriteLocked(), "the writer is popped and counted as the holder");
        assertTrue(future(writer).cancel(true));
        hooks.proceed();
        releaser.join();
        SyncTesting.queueOf(lock).setHooks(null);

        readers.forEach(r -> assertTrue(granted(r)));
        assertFalse(lock.isWriteLocked());
        assertEquals(2, lock.readers());
        readers.forEach(r -> guardOf(r).close());
        assertFree(lock);
    }

    @Test
    void writerCancelledAfterAReleasePoppedItLeavesNoPhantomWriterOnceCancelReturns() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        CompletionStage<Guard> readerBehind = lock.acquireShared();

        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", lock::unlockShared);
        PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
        SyncTesting.queueOf(lock).setHooks(hooks);
        releaser.start();
        hooks.awaitArrival(); // the writer is popped and counted as the holder; no grant CAS yet
        try {
            assertTrue(future(writer).cancel(true));

            // the writer is gone and the only reader has left: nothing may hold readers back now
            assertFalse(lock.isWriteLocked(), "a cancelled writer still counted as the holder");
            assertTrue(granted(readerBehind), "the reader behind the cancelled writer is re-admitted");
            assertTrue(lock.tryLockShared(), "a new reader enters: no writer holds or waits");
            lock.unlockShared();
        } finally {
            hooks.proceed();
            releaser.join();
            SyncTesting.queueOf(lock).setHooks(null);
        }

        assertEquals(1, lock.readers());
        guardOf(readerBehind).close();
        assertFree(lock);
    }

    @Test
    void readerCancelledAfterAReleasePoppedItGivesItsShareBackOnceCancelReturns() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock());
        CompletionStage<Guard> reader = lock.acquireShared();
        CompletionStage<Guard> writerBehind = lock.acquire();

        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", lock::unlock);
        PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
        SyncTesting.queueOf(lock).setHooks(hooks);
        releaser.start();
        hooks.awaitArrival(); // the reader is popped and counted; no grant CAS yet
        try {
            assertTrue(future(reader).cancel(true));

            assertEquals(0, lock.readers(), "a cancelled reader still counted as holding");
            assertTrue(granted(writerBehind), "the writer behind the cancelled reader gets the lock");
        } finally {
            hooks.proceed();
            releaser.join();
            SyncTesting.queueOf(lock).setHooks(null);
        }

        assertTrue(lock.isWriteLocked());
        guardOf(writerBehind).close();
        assertFree(lock);
    }

    @Test
    void completingAWaitingFutureCancelsTheWaitAndReadmitsReaders() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        CompletionStage<Guard> reader = lock.acquireShared();

        assertTrue(future(writer).completeExceptionally(new IllegalStateException("caller gave up")));

        assertTrue(granted(reader));
        assertFalse(lock.isWriteLocked());
        lock.unlockShared();
        guardOf(reader).close();
        assertFree(lock);
    }

    @Test
    void orTimeoutOnAWaitingWriterReadmitsTheReadersBehindIt() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        CompletionStage<Guard> reader = lock.acquireShared();

        future(writer).orTimeout(1, TimeUnit.MILLISECONDS);

        Guard r = awaitGuard(reader);
        // the timeout thread re-admits the reader before it settles the writer's future
        ExecutionException timedOut = assertThrows(
                ExecutionException.class, () -> future(writer).get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(timedOut.getCause() instanceof TimeoutException, timedOut.toString());
        assertFalse(lock.isWriteLocked());
        r.close();
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void interruptedBlockingWriterReadmitsTheReadersBehindIt() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        AtomicReference<Throwable> writerOutcome = new AtomicReference<>();
        TestKit.Forked<Void> writer = TestKit.forkRun("writer", () -> {
            try {
                lock.acquireBlocking().close();
            } catch (InterruptedException expected) {
                writerOutcome.set(expected);
            }
        });
        awaitQueueLength(lock, 1);
        CompletionStage<Guard> reader = lock.acquireShared();
        assertFalse(granted(reader));

        writer.thread.interrupt();
        writer.join();

        assertTrue(writerOutcome.get() instanceof InterruptedException);
        assertTrue(granted(reader));
        guardOf(reader).close();
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void timedOutBlockingWriterReadmitsTheReadersBehindIt() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        AtomicReference<Optional<Guard>> writerOutcome = new AtomicReference<>();
        // the timeout only has to outlast the reader's arrival below
        TestKit.Forked<Void> writer =
                TestKit.forkRun("writer", () -> writerOutcome.set(lock.tryAcquire(Duration.ofMillis(500))));
        awaitQueueLength(lock, 1);
        CompletionStage<Guard> reader = lock.acquireShared();

        writer.join();

        assertTrue(writerOutcome.get().isEmpty(), "the writer timed out");
        Guard r = awaitGuard(reader);
        assertEquals(2, lock.readers());
        r.close();
        lock.unlockShared();
        assertFree(lock);
    }

    @Test
    void tokenCancelledWaitingWriterReadmitsTheReadersQueuedBehindIt() {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CancellationSource source = new CancellationSource();
        CompletionStage<Guard> writer = lock.acquire(source.token());
        CompletionStage<Guard> reader = lock.acquireShared();

        assertTrue(source.cancel());

        Throwable failed = future(writer).handle((guard, failure) -> failure).join();
        assertTrue(failed instanceof CancellationException, String.valueOf(failed));
        assertTrue(String.valueOf(failed.getMessage()).contains("AsyncSharedMutex"), failed.toString());
        assertTrue(granted(reader), "the reader held back only by the cancelled writer enters");
        assertEquals(2, lock.readers());
        assertEquals(0, lock.queueLength());
        guardOf(reader).close();
        lock.unlockShared();
        assertFree(lock);
    }
}
