package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.future;
import static io.refpool.sync.SharedMutexTesting.granted;
import static io.refpool.sync.SharedMutexTesting.guardOf;
import static io.refpool.sync.SharedMutexTesting.state;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The reader ceiling of {@link AsyncSharedMutex}, lowered to 4 through the test constructor: at the
 * ceiling {@code tryLockShared} fails, an acquire that only the ceiling holds back is refused with a
 * clear error that changes nothing, readers queued behind a writer beyond the ceiling enter as
 * readers leave, and the count never spills into the writer bit.
 */
class AsyncSharedMutexCeilingTest {
    private static final int CEILING = 4;

    private static AsyncSharedMutex lockAtTheCeiling() {
        AsyncSharedMutex lock = new AsyncSharedMutex(CEILING);
        for (int i = 0; i < CEILING; i++) {
            assertTrue(lock.tryLockShared(), "reader " + i);
        }
        return lock;
    }

    private static void releaseReaders(AsyncSharedMutex lock, int n) {
        for (int i = 0; i < n; i++) {
            lock.unlockShared();
        }
    }

    @Test
    void tryLockSharedFailsAtTheCeiling() {
        AsyncSharedMutex lock = lockAtTheCeiling();
        long before = state(lock);

        assertFalse(lock.tryLockShared());
        assertTrue(lock.tryAcquireShared().isEmpty());
        assertEquals(before, state(lock));
        assertEquals(CEILING, lock.readers());
        assertFalse(lock.isWriteLocked());

        lock.unlockShared();
        assertTrue(lock.tryLockShared(), "one below the ceiling a reader enters again");
        releaseReaders(lock, CEILING);
        assertFree(lock);
    }

    @Test
    void acquireThatOnlyTheCeilingHoldsBackIsRefusedNamingTheCeiling() throws Exception {
        AsyncSharedMutex lock = lockAtTheCeiling();
        long before = state(lock);
        CancellationSource source = new CancellationSource();

        List<Executable> waitingAcquires = List.of(
                lock::acquireSharedBlocking,
                () -> lock.acquireSharedBlocking(source.token()),
                () -> lock.acquireSharedBlocking(Duration.ofSeconds(30)),
                () -> lock.tryAcquireShared(Duration.ofSeconds(30)),
                () -> { // an async acquire fails only through its stage: it must not throw
                    throw TestKit.joinedFailure(assertDoesNotThrow(() -> lock.acquireShared()));
                },
                () -> {
                    throw TestKit.joinedFailure(assertDoesNotThrow(() -> lock.acquireShared(source.token())));
                });
        for (Executable acquire : waitingAcquires) {
            IllegalStateException e = assertThrows(IllegalStateException.class, acquire);
            assertTrue(e.getMessage().contains("AsyncSharedMutex"), e.getMessage());
            assertTrue(e.getMessage().contains(CEILING + " readers"), e.getMessage());
            assertTrue(e.getMessage().contains("ceiling"), e.getMessage());
            assertEquals(before, state(lock), "a refused acquire changes nothing");
            assertEquals(0, lock.queueLength());
        }
        assertTrue(lock.tryAcquireShared(Duration.ZERO).isEmpty(), "a zero timeout does not wait, so is not refused");
        source.cancel(); // no refused acquire is left listening to the token
        assertEquals(before, state(lock));

        releaseReaders(lock, CEILING);
        assertFree(lock);
    }

    @Test
    void writerStillQueuesAtTheCeilingAndGetsTheLockWhenTheReadersLeave() {
        AsyncSharedMutex lock = lockAtTheCeiling();
        CompletionStage<Guard> writer = lock.acquire();
        assertFalse(granted(writer));

        releaseReaders(lock, CEILING);

        assertTrue(granted(writer));
        guardOf(writer).close();
        assertFree(lock);
    }

    @Test
    void readersQueuedBehindAWriterBeyondTheCeilingEnterAsReadersLeave() {
        AsyncSharedMutex lock = new AsyncSharedMutex(CEILING);
        assertTrue(lock.tryLock());
        List<CompletionStage<Guard>> readers = new ArrayList<>();
        for (int i = 0; i < CEILING + 3; i++) {
            readers.add(lock.acquireShared());
        }

        lock.unlock();

        for (int i = 0; i < readers.size(); i++) {
            assertEquals(i < CEILING, granted(readers.get(i)), "reader " + i + " of the batch");
        }
        assertEquals(CEILING, lock.readers());
        for (int leaving = 0; leaving < 3; leaving++) {
            guardOf(readers.get(leaving)).close();
            assertTrue(granted(readers.get(CEILING + leaving)), "each reader leaving admits the next");
            assertEquals(CEILING, lock.readers());
        }
        assertEquals(0, lock.queueLength());
        for (int i = 3; i < readers.size(); i++) {
            guardOf(readers.get(i)).close();
        }
        assertFree(lock);
    }

    @Test
    void readersBehindACancelledWriterBeyondTheCeilingEnterAsReadersLeave() {
        AsyncSharedMutex lock = lockAtTheCeiling();
        CompletionStage<Guard> writer = lock.acquire();
        List<CompletionStage<Guard>> readers = List.of(lock.acquireShared(), lock.acquireShared());

        assertTrue(future(writer).cancel(true));

        readers.forEach(r -> assertFalse(granted(r), "the ceiling still holds them back"));
        assertEquals(2, lock.queueLength());
        assertFalse(lock.tryLockShared());
        CompletionStage<Guard> later = lock.acquireShared();
        assertFalse(granted(later), "a later reader queues behind them; it is not refused");

        lock.unlockShared();
        assertTrue(granted(readers.get(0)));
        assertFalse(granted(readers.get(1)));
        lock.unlockShared();
        assertTrue(granted(readers.get(1)));
        lock.unlockShared();
        assertTrue(granted(later));
        assertEquals(CEILING, lock.readers());

        lock.unlockShared();
        readers.forEach(r -> guardOf(r).close());
        guardOf(later).close();
        assertFree(lock);
    }

    @Test
    void readerCountNeverSpillsIntoTheWriterBit() {
        AsyncSharedMutex lock = new AsyncSharedMutex(CEILING);
        for (int round = 0; round < 1_000; round++) {
            int entered = 0;
            while (lock.tryLockShared()) {
                entered++;
                assertFalse(lock.isWriteLocked());
            }
            assertEquals(CEILING, entered);
            assertInstanceOf(IllegalStateException.class, TestKit.joinedFailure(lock.acquireShared()));
            assertEquals(CEILING, state(lock), "only the reader count is set in the state word");
            releaseReaders(lock, CEILING);
        }
        assertTrue(lock.tryLock());
        lock.unlock();
        assertFree(lock);
    }

    @Test
    void ceilingMustBeBetweenOneAndMaxReaders() {
        assertThrows(IllegalArgumentException.class, () -> new AsyncSharedMutex(0));
        assertThrows(IllegalArgumentException.class, () -> new AsyncSharedMutex(-1));
        assertEquals(Integer.MAX_VALUE, AsyncSharedMutex.MAX_READERS);
        AsyncSharedMutex single = new AsyncSharedMutex(1);
        assertTrue(single.tryLockShared());
        assertFalse(single.tryLockShared());
        single.unlockShared();
        assertFree(single);
    }
}
