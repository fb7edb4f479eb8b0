package io.refpool.bench.baseline;

import java.util.ArrayList;

/**
 * Baseline: the release queue without a flag. Every attach takes the queue's lock to find out
 * whether anything is pending ({@link #swapBatch()} locks, and returns {@code null} when the list is
 * empty), so attaching threads contend on the lock word even when nothing is ever pending: PyO3's
 * reference pool between #3250, which removed its dirty flag, and #6200, which brought one back after
 * #6199 found the lock serializing multithreaded embedders.
 */
public final class AlwaysLockReleaseQueue extends BaselineReleaseQueue {
    /** Creates an empty queue. */
    public AlwaysLockReleaseQueue() {}

    @Override
    public ArrayList<Object> takeIfDirty() {
        return swapBatch();
    }

    @Override
    protected void raiseDirty() {
        // no flag: the attach side always looks under the lock
    }
}
