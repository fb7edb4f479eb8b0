package io.refpool.sync.internal;

/**
 * The state of {@code AsyncMutex}: bit {@link #LOCKED} plus the queue's {@link #QUEUED}.
 *
 * <pre>
 *   state              meaning
 *   0                  free
 *   LOCKED             held, nobody waiting
 *   LOCKED | QUEUED    held, waiters queued (a release hands the lock to the head)
 * </pre>
 *
 * <p>{@code QUEUED} implies {@code LOCKED}: a release with waiters never frees the lock, it hands it
 * over, so {@link #tryLock()} (a CAS from exactly 0) cannot barge.
 */
public final class MutexSync extends WaiterQueue {
    /** The only argument a mutex acquire takes. */
    public static final int ONE = 1;

    static final long LOCKED = 1L;

    public MutexSync() {
        super(0L);
    }

    /** {@return whether the uncontended CAS from free to held succeeded} */
    public boolean tryLock() {
        return casState(0L, LOCKED);
    }

    /** Releases the lock, handing it to the head waiter if there is one. */
    public void unlock() {
        if (casState(LOCKED, 0L)) {
            return; // held, nobody queued: the common case, one CAS without a read before it
        }
        for (; ; ) {
            long s = state();
            if ((s & LOCKED) == 0) {
                throw new IllegalStateException("unlock() on " + describe() + " that is not locked");
            }
            if ((s & QUEUED) != 0) {
                releaseSlow(ONE);
                return;
            }
            if (casState(s, s & ~LOCKED)) {
                return;
            }
        }
    }

    public boolean isLocked() {
        return (state() & LOCKED) != 0;
    }

    @Override
    public void release(int arg) {
        unlock();
    }

    @Override
    protected boolean isEligible(long s, int arg) {
        return (s & LOCKED) == 0;
    }

    @Override
    protected long assigned(long s, int arg) {
        return s | LOCKED;
    }

    @Override
    protected long released(long s, int arg) {
        if ((s & LOCKED) == 0) {
            throw new IllegalStateException("unlock() on " + describe() + " that is not locked");
        }
        return s & ~LOCKED;
    }

    @Override
    protected String describe() {
        return "AsyncMutex";
    }
}
