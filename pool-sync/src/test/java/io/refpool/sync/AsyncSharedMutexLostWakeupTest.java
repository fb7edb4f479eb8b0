package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.awaitGuard;
import static io.refpool.sync.SharedMutexTesting.granted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A reader parks only after it saw a writer (holding or waiting) or the ceiling; a reader whose
 * fast path failed and that then finds only readers in its locked recheck acquires at once, even
 * if its CAS there loses to another reader (Elio #1063: such a reader parked and nobody woke it).
 *
 * <p>Each test makes reader A's fast path fail for a reason that is gone by the time A takes the
 * queue lock: A is paused at a named point of its contended path while the writer (or the ceiling,
 * or the waiting writer) goes away and other readers change the count. A must end holding the lock
 * with nobody queued, while the other readers still hold it: nobody would be left to wake it.
 */
class AsyncSharedMutexLostWakeupTest {

    /** Runs {@code acquire} on reader thread A, paused at {@code point} until {@code meanwhile} ran. */
    private static Guard readerAcquiresAfter(AsyncSharedMutex lock, Point point, boolean blocking, Runnable meanwhile)
            throws Exception {
        AtomicReference<Guard> guard = new AtomicReference<>();
        AtomicBoolean grantedAtReturn = new AtomicBoolean();
        TestKit.Forked<Void> a = TestKit.unstartedRun("reader A", () -> {
            if (blocking) {
                guard.set(lock.acquireSharedBlocking());
                grantedAtReturn.set(true);
            } else {
                CompletionStage<Guard> stage = lock.acquireShared();
                grantedAtReturn.set(granted(stage));
                stage.thenAccept(guard::set);
            }
        });
        PausingHooks hooks = new PausingHooks(point, a.thread, 1);
        SyncTesting.queueOf(lock).setHooks(hooks);
        a.start();
        hooks.awaitArrival();
        meanwhile.run();
        hooks.proceed();
        a.join(); // a blocking reader that parked would never return: the other readers keep holding
        SyncTesting.queueOf(lock).setHooks(null);

        assertTrue(grantedAtReturn.get(), "reader A must acquire without waiting");
        assertEquals(0, lock.queueLength(), "reader A must not have queued");
        assertNotNull(guard.get());
        return guard.get();
    }

    @ParameterizedTest(name = "paused at {0}, blocking={1}")
    @CsvSource({
        "AFTER_FAST_PATH_FAILED, false",
        "AFTER_FAST_PATH_FAILED, true",
        "AFTER_WAITER_ALLOCATED, false",
        "AFTER_WAITER_ALLOCATED, true"
    })
    void readerWhoseFastPathFailedOnAWriterThatLeftAcquiresWithoutQueueing(Point point, boolean blocking)
            throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLock(), "a writer holds, so reader A's fast path fails");

        Guard a = readerAcquiresAfter(lock, point, blocking, () -> {
            lock.unlock(); // no writer holds or waits any more
            assertTrue(lock.tryLockShared()); // other readers come and go: the count A saw is stale
            assertTrue(lock.tryLockShared());
            lock.unlockShared();
        });

        assertEquals(2, lock.readers());
        assertFalse(lock.isWriteLocked());
        a.close();
        lock.unlockShared();
        assertFree(lock);
    }

    @ParameterizedTest(name = "paused at {0}, blocking={1}")
    @CsvSource({
        "AFTER_FAST_PATH_FAILED, false",
        "AFTER_FAST_PATH_FAILED, true",
        "AFTER_WAITER_ALLOCATED, false",
        "AFTER_WAITER_ALLOCATED, true"
    })
    void readerWhoseFastPathFailedOnAWaitingWriterThatWasCancelledAcquiresWithoutQueueing(Point point, boolean blocking)
            throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        assertTrue(lock.tryLockShared());
        CompletionStage<Guard> writer = lock.acquire();
        assertFalse(granted(writer), "a writer waits, so reader A's fast path fails");

        Guard a = readerAcquiresAfter(lock, point, blocking, () -> {
            assertTrue(writer.toCompletableFuture().cancel(true)); // nobody waits any more
            assertTrue(lock.tryLockShared());
        });

        assertEquals(3, lock.readers());
        a.close();
        lock.unlockShared();
        lock.unlockShared();
        assertFree(lock);
    }

    @ParameterizedTest(name = "paused at {0}, blocking={1}")
    @CsvSource({
        "AFTER_FAST_PATH_FAILED, false",
        "AFTER_FAST_PATH_FAILED, true",
        "AFTER_WAITER_ALLOCATED, false",
        "AFTER_WAITER_ALLOCATED, true"
    })
    void readerWhoseFastPathFailedAtTheCeilingAcquiresOnceAReaderLeft(Point point, boolean blocking) throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex(3);
        for (int i = 0; i < 3; i++) {
            assertTrue(lock.tryLockShared());
        }

        Guard a = readerAcquiresAfter(lock, point, blocking, () -> {
            lock.unlockShared(); // below the ceiling again, and no writer anywhere
            lock.unlockShared();
            assertTrue(lock.tryLockShared());
        });

        assertEquals(3, lock.readers());
        a.close();
        lock.unlockShared();
        lock.unlockShared();
        assertFree(lock);
    }

    /**
     * The locked recheck of reader A runs while another thread keeps changing the reader count, so
     * A's CAS there often loses to a reader. Whatever the interleaving, A must acquire at once.
     */
    @Test
    void readerRacingOtherReadersThroughItsLockedRecheckNeverQueues() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        for (int round = 0; round < 1_000; round++) {
            assertTrue(lock.tryLock());
            AtomicBoolean stop = new AtomicBoolean();
            TestKit.Forked<Void> churn = TestKit.unstartedRun("churning readers", () -> {
                while (!stop.get()) {
                    if (lock.tryLockShared()) {
                        lock.unlockShared();
                    }
                }
            });
            int r = round;
            Guard a = readerAcquiresAfter(lock, Point.AFTER_WAITER_ALLOCATED, false, () -> {
                lock.unlock();
                assertTrue(lock.tryLockShared(), "round " + r);
                churn.start();
            });
            stop.set(true);
            churn.join();
            assertEquals(2, lock.readers(), "round " + round);
            a.close();
            lock.unlockShared();
            assertFree(lock);
        }
    }

    @Test
    void lastReaderLeavingHandsTheLockToAWriterThatQueuedWhileItLeft() throws Exception {
        // the writer sets its waiting bit while the last reader's fast-path decrement is in flight:
        // one of the two CASes on the state word fails, and whichever it is, nobody is left waiting
        AsyncSharedMutex lock = new AsyncSharedMutex();
        for (int round = 0; round < 1_000; round++) {
            assertTrue(lock.tryLockShared());
            AtomicReference<CompletionStage<Guard>> writer = new AtomicReference<>();
            TestKit.Forked<Void> w = TestKit.forkRun("writer", () -> writer.set(lock.acquire()));
            lock.unlockShared();
            w.join();
            awaitGuard(writer.get()).close();
            assertFree(lock);
        }
    }
}
