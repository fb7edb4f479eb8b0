package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The bias flag of {@link ReaderBiasedSharedMutex} on a clock the test moves: a revocation turns it
 * off for nine times what it took, readers meanwhile hold through the underlying word, the first
 * reader after the window turns it back on, a writer inside the window revokes nothing, a
 * cancelled revocation leaves no window, and the policy forces it either way.
 */
class ReaderBiasedSharedMutexBiasTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();

    {
        lock.clock = now::get;
    }

    /** A revocation that waited 100 ticks for a reader: the window closes 900 ticks after it. */
    private void revokeTaking100Ticks(boolean forcedOn) {
        assertTrue(lock.tryLockShared());
        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture();
        assertFalse(writer.isDone());
        assertTrue(lock.isBiased() == forcedOn, "the writer turned the bias off as it started, unless forced on");
        now.addAndGet(100);
        lock.unlockShared(); // the last reader grants the writer and ends the revocation
        writer.join().close();
    }

    @Test
    void aRevocationKeepsTheBiasOffForNineTimesWhatItTook() {
        revokeTaking100Ticks(false); // ended at 1100: off until 2000
        now.set(1_999);
        assertFalse(lock.tryLockShared(), "inside the window the biased try fails at once");
        assertTrue(lock.tryLockSharedUnbiased(), "and the word takes the reader");
        assertEquals(1, lock.readers());
        lock.unlockSharedUnbiased();
        assertEquals(0, lock.readers());
        IllegalStateException extra = assertThrows(IllegalStateException.class, lock::unlockSharedUnbiased);
        assertTrue(extra.getMessage().contains("ReaderBiasedSharedMutex"), extra.getMessage());
        assertEquals(0, lock.readers(), "an extra give-back is refused and changes nothing");

        now.set(2_000);
        assertTrue(lock.tryLockShared(), "the first reader after the window turns the bias back on");
        assertTrue(lock.isBiased());
        assertFalse(lock.tryLockSharedUnbiased(), "no word hold while biased");
        lock.unlockShared();
    }

    @Test
    void aWriterInsideTheWindowWaitsForWordReadersAndRevokesNothing() {
        revokeTaking100Ticks(false);
        now.set(1_500);
        assertTrue(lock.tryLockSharedUnbiased());
        assertFalse(lock.tryLock(), "a word reader keeps the writer out");
        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture();
        assertFalse(writer.isDone());
        assertFalse(lock.tryLockSharedUnbiased(), "a waiting writer keeps new word readers out");
        now.set(1_900);
        lock.unlockSharedUnbiased(); // the word's queue grants the writer
        writer.join().close();
        now.set(2_000);
        assertTrue(lock.tryLockShared(), "the window is still the first revocation's: nothing re-timed");
        lock.unlockShared();
    }

    /**
     * {@link System#nanoTime()} may be negative. A revocation that never ends sets no window of its
     * own; before, the bias then stayed off until the clock passed zero, however long that took.
     */
    @Test
    void anUnfinishedRevocationOnANegativeClockLeavesTheBiasToComeBack() {
        now.set(-5_000_000_000L);
        assertTrue(lock.tryLockShared());
        assertFalse(lock.tryLock(), "fails on the reader, after revoking the bias");
        lock.unlockShared();
        now.addAndGet(1);
        assertTrue(lock.tryLockShared(), "the bias is back: no window was set");
        lock.unlockShared();
        assertEquals(0, lock.readers());
    }

    @Test
    void cancellingAWriterMidRevocationAdmitsReadersAndLeavesNoWindow() {
        assertTrue(lock.tryLockShared());
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> writer = lock.acquire(source.token()).toCompletableFuture();
        CompletableFuture<Guard> queued =
                lock.acquireShared(CancellationToken.none()).toCompletableFuture();
        assertFalse(queued.isDone(), "a reader arriving during the revocation waits behind the writer");
        now.addAndGet(1_000_000);
        source.cancel();
        assertThrows(CancellationException.class, writer::join);
        assertFalse(lock.isWriteLocked(), "the cancelled writer owns nothing");
        queued.join().close(); // the queued reader was admitted
        assertTrue(lock.tryLockShared(), "an unfinished revocation sets no window");
        lock.unlockShared();
        lock.unlockShared();
        assertEquals(0, lock.readers());
        try (Guard exclusive = lock.tryLock() ? lock::unlock : null) {
            assertNotNull(exclusive, "and the writer side is free again");
        }
    }

    @Test
    void forcedOnKeepsTheBiasThroughRevocations() {
        lock.setBiasPolicy(Boolean.TRUE);
        revokeTaking100Ticks(true);
        assertTrue(lock.isBiased());
        assertTrue(lock.tryLockShared());
        lock.unlockShared();
    }

    @Test
    void forcedOffRoutesEveryReaderThroughTheWordUntilRestored() {
        lock.setBiasPolicy(Boolean.FALSE);
        now.set(Long.MAX_VALUE / 2);
        assertFalse(lock.tryLockShared(), "no window ends a forced-off bias");
        assertTrue(lock.tryLockSharedUnbiased());
        assertFalse(lock.tryLock());
        lock.unlockSharedUnbiased();
        assertTrue(lock.tryLock());
        lock.unlock();

        lock.setBiasPolicy(null);
        assertTrue(lock.isBiased());
        assertTrue(lock.tryLockShared());
        lock.unlockShared();
    }
}
