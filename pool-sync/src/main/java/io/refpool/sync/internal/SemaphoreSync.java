package io.refpool.sync.internal;

/**
 * The state of {@code AsyncSemaphore}: the available permits in the low 32 bits plus the queue's
 * {@link #QUEUED}.
 *
 * <pre>
 *   transition                      by
 *   permits -= n                    an acquire of n while nobody is queued and n are available,
 *                                   or the release that assigns n to the head waiter
 *   permits += n                    a release with nobody queued (lock-free)
 *   permits += n, then heads served a release while queued, under the queue lock, in one CAS
 * </pre>
 *
 * <p>Requests are served strictly in order: a head request larger than the available permits
 * holds back smaller ones behind it until enough are released, or until it is cancelled, which
 * reassigns at once.
 */
public final class SemaphoreSync extends WaiterQueue {
    private static final long PERMITS = 0xFFFF_FFFFL;

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

    /** {@return whether {@code n} permits were taken at once}; fails while anyone is queued. */
    public boolean tryTake(int n) {
        for (; ; ) {
            long s = state();
            if ((s & QUEUED) != 0 || (s & PERMITS) < n) {
                return false;
            }
            if (casState(s, s - n)) {
                return true;
            }
        }
    }

    @Override
    public void release(int n) {
        for (; ; ) {
            long s = state();
            checkRelease(s, n);
            if ((s & QUEUED) != 0) {
                releaseSlow(n);
                return;
            }
            if (casState(s, s + n)) {
                return;
            }
        }
    }

    private void checkRelease(long s, int n) {
        long permits = s & PERMITS;
        if (permits + n > maxPermits) {
            throw new IllegalStateException("release(" + n + ") on " + describe() + " with " + permits
                    + " available would exceed its maximum of " + maxPermits + " permits");
        }
    }

    @Override
    protected boolean isEligible(long s, int n) {
        return (s & PERMITS) >= n;
    }

    @Override
    protected long assigned(long s, int n) {
        return s - n;
    }

    @Override
    protected long released(long s, int n) {
        checkRelease(s, n);
        return s + n;
    }

    @Override
    protected String describe() {
        return "AsyncSemaphore(max " + maxPermits + ")";
    }
}
