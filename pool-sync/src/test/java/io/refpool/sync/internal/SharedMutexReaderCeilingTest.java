package io.refpool.sync.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * The shared mutex's state at the real reader ceiling, {@link SharedSync#MAX_READERS}: the state
 * word is set just below it (no test could take two billion read locks), and the reader count must
 * stop there, never carrying into the writer bit.
 */
class SharedMutexReaderCeilingTest {

    private static SharedSync syncWithReaders(long readers) {
        SharedSync sync = new SharedSync(SharedSync.MAX_READERS);
        assertTrue(sync.casState(0L, readers));
        return sync;
    }

    @Test
    void readerCountStopsAtMaxReadersWithoutTouchingTheWriterBit() {
        SharedSync sync = syncWithReaders(SharedSync.MAX_READERS - 1L);

        assertTrue(sync.tryLockShared());
        assertEquals(SharedSync.MAX_READERS, sync.readers());
        assertFalse(sync.tryLockShared(), "the ceiling is reached");
        assertFalse(sync.isWriteLocked());
        assertEquals(SharedSync.READERS, sync.state(), "no bit above the reader count is set");
        assertFalse(sync.tryLock());

        CompletableFuture<Guard> refusedStage = // an async acquire is refused through its stage
                sync.acquireAsync(SharedSync.READ, CancellationToken.none()).toCompletableFuture();
        IllegalStateException refused = assertInstanceOf(
                IllegalStateException.class,
                assertThrows(CompletionException.class, refusedStage::join).getCause());
        assertTrue(refused.getMessage().contains(SharedSync.MAX_READERS + " readers"), refused.getMessage());
        assertEquals(SharedSync.READERS, sync.state(), "a refused acquire changes nothing");

        sync.unlockShared();
        assertEquals(SharedSync.MAX_READERS - 1, sync.readers());
    }

    @Test
    void writerQueuedAtMaxReadersGetsTheLockWhenTheyLeave() {
        SharedSync sync = syncWithReaders(SharedSync.MAX_READERS);

        CompletionStage<Guard> writer = sync.acquireAsync(SharedSync.WRITE, CancellationToken.none());
        assertFalse(writer.toCompletableFuture().isDone());
        assertEquals(1, sync.queueLength());

        // the last readers leave; the ceiling-release and the last-reader release take the slow path
        sync.unlockShared();
        assertTrue(sync.casState(sync.state(), WaiterQueue.QUEUED | 1L), "skip to the last reader");
        sync.unlockShared();

        assertTrue(writer.toCompletableFuture().isDone());
        assertTrue(sync.isWriteLocked());
        assertEquals(0, sync.readers());
        writer.toCompletableFuture().join().close();
        assertEquals(0L, sync.state());
    }
}
