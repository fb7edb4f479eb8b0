package io.refpool.bench.baseline;

import java.util.ArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The part every release-queue design in this benchmark shares with refpool's
 * ({@code io.refpool.core.internal.ReleaseQueue}): a list under a lock, enqueued by lock, add,
 * unlock, then raising whatever flag the design has. Subclasses differ only in the flag and the
 * attach-side check, so a benchmark that drives them side by side measures the check.
 *
 * <pre>{@code
 * BaselineReleaseQueue queue = new SwapFlagReleaseQueue();
 * queue.enqueue(release);                            // any thread
 * ArrayList<Object> batch = queue.takeIfDirty();     // an attaching thread
 * }</pre>
 */
public abstract class BaselineReleaseQueue {
    private final ReentrantLock queueLock = new ReentrantLock();
    private ArrayList<Object> pending = new ArrayList<>();
    private volatile int size;

    /** For subclasses. */
    protected BaselineReleaseQueue() {}

    /**
     * Adds a pending release: lock, add, unlock, then raise the flag.
     *
     * @param release what to apply when attached
     * @return the number of pending releases right after the add
     */
    public final int enqueue(Object release) {
        int after;
        queueLock.lock();
        try {
            pending.add(release);
            after = pending.size();
            size = after;
        } finally {
            queueLock.unlock();
        }
        raiseDirty();
        return after;
    }

    /**
     * The attach-side check.
     *
     * @return the batch to apply, or {@code null} when there is nothing to do
     */
    public abstract ArrayList<Object> takeIfDirty();

    /** Raises the flag after an add. */
    protected abstract void raiseDirty();

    /** {@return the pending list swapped out under the lock, or {@code null} if it was empty} */
    protected final ArrayList<Object> swapBatch() {
        queueLock.lock();
        try {
            ArrayList<Object> batch = pending;
            if (batch.isEmpty()) {
                return null;
            }
            pending = new ArrayList<>();
            size = 0;
            return batch;
        } finally {
            queueLock.unlock();
        }
    }

    /** {@return the number of pending releases} */
    public final int size() {
        return size;
    }
}
