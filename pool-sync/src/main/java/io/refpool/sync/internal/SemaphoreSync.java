package io.refpool.sync.internal;

/**
 * The state of {@code AsyncSemaphore}: the available permits in bits 0–30, the permits held through
 * guards in bits 31–61, plus the queue's {@link #QUEUED}.
 *
 * <pre>
 *   transition                              by
 *   available -= n                          tryTake(n), the raw acquire, while nobody is queued
 *   available -= n, guardHeld += n          an acquire of n that returns a guard, while nobody is
 *                                           queued, or the release that assigns n to a waiter
 *   available += n                          the raw release(n) (lock-free while nobody is queued)
 *   available += n, guardHeld -= n          a guard's close()
 *   either release, then heads served       a release while queued, under the queue lock, in one CAS
 * </pre>
 *
 * <p>Both counts are at most {@code maxPermits} ({@code Integer.MAX_VALUE} at most, 31 bits), and so
 * is their sum: a guard's acquire and close only move permits between them, and the raw release
 * refuses to raise the sum above {@code maxPermits}. The permits neither available nor held by
 * guards, {@code maxPermits − available − guardHeld}, are the only ones a raw release may return:
 * those taken with {@code tryTake}, and those the semaphore started without. A raw release cannot
 * tell one raw caller from another, but it cannot return a guard's permits: a second raw release
 * after the first handed its permits to a waiter, which holds them through its guard, is refused.
 *
 * <p>Requests are served strictly in order: a head request larger than the available permits
 * holds back smaller ones behind it until enough are released, or until it is cancelled, which
 * reassigns at once.
 */
public final class SemaphoreSync extends WaiterQueue {
    private static final long PERMITS = 0x7FFF_FFFFL;
    private static final int GUARD_HELD_SHIFT = 31;
    private static final long GUARD_HELD = PERMITS << GUARD_HELD_SHIFT;

    private final int maxPermits;

    public SemaphoreSync(int initialPermits, int maxPermits) {
        super(initialPermits);
        this.maxPermits = maxPermits;
    }

    public int maxPermits() {
        return maxPermits;
    }

    public int availablePermits() {
        return (int) (state() & PERMITS);
    }

    private static long guardHeld(long s) {
        return (s & GUARD_HELD) >>> GUARD_HELD_SHIFT;
    }

    private static long toGuard(int n) {
        return (long) n << GUARD_HELD_SHIFT;
    }

    /** {@return whether {@code n} permits were taken at once by the raw pair}; fails while anyone is queued. */
    public boolean tryTake(int n) {
        return tryTake(n, 0L);
    }

    @Override
    protected boolean tryAcquireForGuard(int arg) {
        return tryTakeForGuard(arg);
    }

    /** {@return whether {@code n} permits were taken at once for a guard}; fails while anyone is queued. */
    public boolean tryTakeForGuard(int n) {
        return tryTake(n, toGuard(n));
    }

    private boolean tryTake(int n, long guardDelta) {
        for (; ; ) {
            long s = state();
            if ((s & QUEUED) != 0 || (s & PERMITS) < n) {
                return false;
            }
            if (casState(s, s - n + guardDelta)) {
                return true;
            }
        }
    }

    /**
     * The raw release of {@code n} permits, serving queued requests in order.
     *
     * @throws IllegalStateException if fewer than {@code n} permits are out other than through
     *     guards; nothing changes
     */
    public void releaseRaw(int n) {
        releaseHeld(n, true);
    }

    @Override
    public void release(int n) {
        releaseHeld(n, false);
    }

    @Override
    protected boolean isEligible(long s, int n) {
        return (s & PERMITS) >= n;
    }

    @Override
    protected long assigned(long s, int n) {
        return s - n + toGuard(n);
    }

    @Override
    protected long released(long s, int n) {
        if (guardHeld(s) < n) {
            throw new IllegalStateException(
                    "a guard of " + describe() + " returned " + n + " permits, but guards hold " + guardHeld(s));
        }
        return s + n - toGuard(n);
    }

    @Override
    protected long releasedRaw(long s, int n) {
        long available = s & PERMITS;
        long guardHeld = guardHeld(s);
        if (available + guardHeld + n > maxPermits) {
            throw new IllegalStateException("release(" + n + ") on " + describe() + " with " + available
                    + " available and " + guardHeld + " held by guards would exceed its maximum of " + maxPermits
                    + " permits: release(n) returns only permits taken with tryAcquirePermits, of which at most "
                    + (maxPermits - available - guardHeld) + " are out; a guard's permits come back by its close()");
        }
        return s + n;
    }

    @Override
    protected String describe() {
        return "AsyncSemaphore(max " + maxPermits + ")";
    }
}
