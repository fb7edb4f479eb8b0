package io.refpool.sync;

import static io.refpool.sync.AcquireRoles.NOT_APPLICABLE;
import static io.refpool.sync.AcquireRoles.SLOTS;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The sequential FIFO semaphore that {@link AsyncSemaphore} must be linearizable to: the operations
 * of {@link AcquireRoles}, each atomic. Requests are served strictly in order; a head that does
 * not fit holds back the smaller ones behind it until it is served or cancelled.
 */
public class SemaphoreSpec {
    /** The permits of the semaphore under test. */
    static final int MAX_PERMITS = 2;

    private final int[] held = new int[SLOTS];
    private final int[] waitsFor = new int[SLOTS];
    /** Whether {@code held[t]} came through an acquire future (which a cancel then finds granted). */
    private final boolean[] heldByFuture = new boolean[SLOTS];

    private final ArrayDeque<Integer> queue = new ArrayDeque<>();
    private int permits;

    public SemaphoreSpec() {
        this(MAX_PERMITS);
    }

    SemaphoreSpec(int permits) {
        this.permits = permits;
    }

    /** {@return the permits a request for {@code requested} takes} */
    int size(int requested) {
        return requested;
    }

    private boolean idle(int t) {
        return held[t] == 0 && waitsFor[t] == 0;
    }

    private void serveHeads() {
        for (Integer head = queue.peekFirst(); head != null; head = queue.peekFirst()) {
            int n = waitsFor[head];
            if (n > permits) {
                return;
            }
            queue.pollFirst();
            permits -= n;
            waitsFor[head] = 0;
            held[head] = n;
            heldByFuture[head] = true;
        }
    }

    /** {@return whether {@code t} took {@code n} permits at once}: nobody waits and they are there. */
    private boolean takeAtOnce(int t, int n, boolean byFuture) {
        if (!queue.isEmpty() || permits < n) {
            return false;
        }
        permits -= n;
        held[t] = n;
        heldByFuture[t] = byFuture;
        return true;
    }

    public int tryAcquire(int t, int n) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        return takeAtOnce(t, size(n), false) ? 1 : 0;
    }

    public int acquire(int t, int n) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        if (!takeAtOnce(t, size(n), true)) {
            queue.addLast(t);
            waitsFor[t] = size(n);
        }
        return 0;
    }

    public int cancel(int t) {
        if (heldByFuture[t]) {
            return 0; // the grant won
        }
        if (waitsFor[t] == 0) {
            return NOT_APPLICABLE;
        }
        queue.remove(t);
        waitsFor[t] = 0;
        serveHeads();
        return 1;
    }

    public int acquireThenCancel(int t, int n) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        return takeAtOnce(t, size(n), true) ? 1 : 0;
    }

    public int release(int t) {
        if (waitsFor[t] != 0) {
            return 0;
        }
        if (held[t] == 0) {
            return NOT_APPLICABLE;
        }
        permits += held[t];
        held[t] = 0;
        heldByFuture[t] = false;
        serveHeads();
        return 1;
    }

    public int availablePermits() {
        return permits;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SemaphoreSpec)) {
            return false;
        }
        SemaphoreSpec other = (SemaphoreSpec) o;
        return other.permits == permits
                && Arrays.equals(other.held, held)
                && Arrays.equals(other.waitsFor, waitsFor)
                && Arrays.equals(other.heldByFuture, heldByFuture)
                && Arrays.equals(other.queue.toArray(), queue.toArray());
    }

    @Override
    public int hashCode() {
        return ((Arrays.hashCode(held) * 31 + Arrays.hashCode(waitsFor)) * 31 + Arrays.hashCode(queue.toArray())) * 31
                + permits;
    }
}
