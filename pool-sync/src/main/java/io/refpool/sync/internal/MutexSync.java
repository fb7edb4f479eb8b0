package io.refpool.sync.internal;

/**
 * The state of {@code AsyncMutex}: bit {@link #LOCKED}, bit {@link #GUARD_HELD}, plus the queue's
 * {@link #QUEUED}.
 *
 * <pre>
 *   state                          meaning
 *   0                              free
 *   LOCKED                         held through tryLock(), nobody waiting
 *   LOCKED | GUARD_HELD            held through a Guard, nobody waiting
 *   either of those | QUEUED       held, waiters queued (a release hands the lock to the head)
 *
 *   transition                               by
 *   0 -> LOCKED                              tryLock()
 *   0 -> LOCKED | GUARD_HELD                 an acquire that returns a guard, or a locked recheck
 *   LOCKED -> 0                              unlock()
 *   LOCKED | GUARD_HELD -> 0                 the guard's close()
 *   either -> LOCKED | GUARD_HELD            a release with waiters: the head holds through its guard
 * </pre>
 *
 * <p>{@code QUEUED} implies {@code LOCKED}: a release with waiters never frees the lock, it hands it
 * over, so {@link #tryLock()} (a CAS from exactly 0) cannot barge.
 *
 * <p>{@code unlock()} releases only a lock held through {@code tryLock()}: a second
 * {@code unlock()} after the first handed the lock to a waiter finds {@code GUARD_HELD} and is
 * refused. What the state cannot tell is which caller of {@code tryLock()} holds: an
 * {@code unlock()} by anyone while a {@code tryLock()} holder holds is taken as that holder's.
 */
public final class MutexSync extends WaiterQueue {
    /** The only argument a mutex acquire takes. */
    public static final int ONE = 1;

    static final long LOCKED = 1L;
    static final long GUARD_HELD = 2L;

    private static final long HELD_BY_GUARD = LOCKED | GUARD_HELD;

    public MutexSync() {
        super(0L);
    }

    /** {@return whether the uncontended CAS from free to held by the raw pair succeeded} */
    public boolean tryLock() {
        return casState(0L, LOCKED);
    }

    @Override
    protected boolean tryAcquireForGuard(int arg) {
        return tryLockForGuard();
    }

    /** {@return whether the uncontended CAS from free to held by a guard succeeded} */
    public boolean tryLockForGuard() {
        return casState(0L, HELD_BY_GUARD);
    }

    /** Releases a lock held through {@link #tryLock()}, handing it to the head waiter if there is one. */
    public void unlock() {
        if (casState(LOCKED, 0L)) {
            return; // held, nobody queued: the common case, one CAS without a read before it
        }
        releaseHeld(ONE, true);
    }

    public boolean isLocked() {
        return (state() & LOCKED) != 0;
    }

    @Override
    public void release(int arg) {
        if (casState(HELD_BY_GUARD, 0L)) {
            return;
        }
        releaseHeld(arg, false);
    }

    @Override
    protected boolean isEligible(long s, int arg) {
        return (s & LOCKED) == 0;
    }

    @Override
    protected long assigned(long s, int arg) {
        return s | HELD_BY_GUARD;
    }

    @Override
    protected long released(long s, int arg) {
        if ((s & HELD_BY_GUARD) != HELD_BY_GUARD) {
            throw new IllegalStateException("a guard of " + describe() + " released it, but no guard holds it");
        }
        return s & ~HELD_BY_GUARD;
    }

    @Override
    protected long releasedRaw(long s, int arg) {
        return rawUnlocked(s, LOCKED, GUARD_HELD, "that is not locked");
    }

    @Override
    protected String describe() {
        return "AsyncMutex";
    }
}
