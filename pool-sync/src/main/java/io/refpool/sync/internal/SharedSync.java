package io.refpool.sync.internal;

/**
 * The state of {@code AsyncSharedMutex}: the reader count in the low 31 bits, {@link #WRITER} while
 * a writer holds the lock, {@link #GUARD_WRITER} with it while that writer holds through a guard,
 * and the queue's {@link #QUEUED}.
 *
 * <pre>
 *   transition                     by
 *   readers + 1                    a reader while no writer holds and nobody is queued (one CAS;
 *                                  a CAS lost to another reader is retried, never parked on)
 *   readers - 1                    a reader leaving (one CAS, no lock) unless it is the last one,
 *                                  or leaves the ceiling, while waiters are queued: then under the
 *                                  queue lock, serving the head in the same CAS
 *   0 -> WRITER                    tryLock() while the lock is free and nobody is queued
 *   0 -> WRITER | GUARD_WRITER     an exclusive acquire that returns a guard, likewise
 *   WRITER -> 0 / next holders     unlock(); if queued, the head is served in the same CAS
 *   WRITER | GUARD_WRITER -> ...   the guard's close(), likewise
 *   + QUEUED / - QUEUED            under the queue lock only, as the queue becomes non-empty / empty
 * </pre>
 *
 * <p>A writer granted from the queue always holds through its guard, so {@code unlock()} after the
 * writer it was meant for already handed the lock on is refused. Readers are one count, whether
 * they hold through a guard or through {@code tryLockShared()}: a second reader count would not fit
 * beside the 31-bit ceiling in one word. So {@code unlockShared()} is refused only when no reader
 * holds at all; while others hold, an extra {@code unlockShared()} takes one of their places.
 *
 * <p>{@code QUEUED} doubles as the writer-waiting bit: a reader only ever queues behind a writer
 * (holding, or queued ahead of it), so while {@code QUEUED} is set a writer holds or waits and new
 * readers queue behind it. When the lock frees, the head is served: a writer alone, or every reader
 * up to the next writer as one batch. Readers count up to {@link #maxReaders()}; beyond it
 * {@code tryLockShared} fails and a waiting acquire that nothing else holds back is refused.
 */
public final class SharedSync extends WaiterQueue {
    /** Argument of a shared (reader) acquire. */
    public static final int READ = 1;
    /** Argument of an exclusive (writer) acquire. */
    public static final int WRITE = 2;

    /** The largest reader count the state can hold. */
    public static final int MAX_READERS = Integer.MAX_VALUE;

    static final long READERS = 0x7FFF_FFFFL;
    static final long WRITER = 1L << 32;
    static final long GUARD_WRITER = 1L << 33;

    private static final long WRITER_BY_GUARD = WRITER | GUARD_WRITER;

    private final int maxReaders;

    /** The public class built on this lock, as messages name it. */
    private final String name;

    public SharedSync(int maxReaders) {
        this(maxReaders, "AsyncSharedMutex");
    }

    /** A lock named {@code name} in its messages: the public class built on it. */
    public SharedSync(int maxReaders, String name) {
        super(0L);
        this.maxReaders = maxReaders;
        this.name = name;
    }

    public int readers() {
        return (int) (state() & READERS);
    }

    public boolean isWriteLocked() {
        return (state() & WRITER) != 0;
    }

    /**
     * {@return whether a writer holds the lock or waits for it}, read with volatile ordering: the
     * second half of a reader's Dekker handshake with a writer that took the lock and then looks
     * for readers outside this word (see {@code ReaderBiasedSharedMutex})
     */
    public boolean writerHoldsOrWaits() {
        return (stateVolatile() & (WRITER | QUEUED)) != 0;
    }

    public int maxReaders() {
        return maxReaders;
    }

    @Override
    protected boolean tryAcquireForGuard(int arg) {
        return arg == READ ? tryLockShared() : tryLockForGuard();
    }

    /** The reader fast path: one CAS while no writer holds or waits, retried only against readers. */
    public boolean tryLockShared() {
        for (; ; ) {
            long s = state();
            if ((s & (WRITER | QUEUED)) != 0 || (s & READERS) >= maxReaders) {
                return false;
            }
            if (casState(s, s + 1)) {
                return true;
            }
        }
    }

    /** {@return whether the uncontended CAS from free to a writer of the raw pair succeeded} */
    public boolean tryLock() {
        return casState(0L, WRITER);
    }

    /** {@return whether the uncontended CAS from free to a writer holding through a guard succeeded} */
    public boolean tryLockForGuard() {
        return casState(0L, WRITER_BY_GUARD);
    }

    /** Releases a reader, raw or through its guard: readers are one count. */
    public void unlockShared() {
        for (; ; ) {
            long s = state();
            long readers = s & READERS;
            if (readers == 0) {
                throw new IllegalStateException("unlockShared() on " + describe() + " with no reader holding it");
            }
            if ((s & QUEUED) != 0 && (readers == 1 || readers == maxReaders)) {
                releaseSlow(READ);
                return;
            }
            if (casState(s, s - 1)) {
                return;
            }
        }
    }

    /** Releases a writer that took the lock with {@link #tryLock()}. */
    public void unlock() {
        releaseHeld(WRITE, true);
    }

    @Override
    public void release(int arg) {
        if (arg == READ) {
            unlockShared();
            return;
        }
        releaseHeld(WRITE, false);
    }

    @Override
    protected boolean isEligible(long s, int arg) {
        if (arg == READ) {
            return (s & WRITER) == 0 && (s & READERS) < maxReaders;
        }
        return (s & (WRITER | READERS)) == 0;
    }

    @Override
    protected long assigned(long s, int arg) {
        return arg == READ ? s + 1 : s | WRITER_BY_GUARD;
    }

    @Override
    protected long released(long s, int arg) {
        if (arg == READ) {
            return readerReleased(s);
        }
        if ((s & WRITER_BY_GUARD) != WRITER_BY_GUARD) {
            throw new IllegalStateException(
                    "a guard of " + describe() + " released a writer, but no writer holds it through a guard");
        }
        return s & ~WRITER_BY_GUARD;
    }

    @Override
    protected long releasedRaw(long s, int arg) {
        if (arg == READ) {
            return readerReleased(s);
        }
        return rawUnlocked(s, WRITER, GUARD_WRITER, "that no writer holds");
    }

    private long readerReleased(long s) {
        if ((s & READERS) == 0) {
            throw new IllegalStateException("unlockShared() on " + describe() + " with no reader holding it");
        }
        return s - 1;
    }

    @Override
    protected void checkMayWait(long s, int arg) {
        if (arg == READ && (s & (WRITER | QUEUED)) == 0 && (s & READERS) >= maxReaders) {
            throw new IllegalStateException(describe() + " already has " + maxReaders
                    + " readers, its ceiling; a further reader would wait for one of them to leave");
        }
    }

    @Override
    protected String describe() {
        return name;
    }
}
