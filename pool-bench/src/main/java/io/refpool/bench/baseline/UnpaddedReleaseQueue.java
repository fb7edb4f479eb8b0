package io.refpool.bench.baseline;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;

/**
 * Baseline: refpool's protocol exactly (one acquire load; when raised, a CAS from true to false,
 * then the swap under the lock), with the flag declared right next to the queue's own fields instead
 * of between two paddings. Attachers reading the flag then share a cache line with the lock word,
 * the list reference and the size, which every enqueue writes; the difference to refpool shows
 * what the padding buys when releases are pending.
 */
public final class UnpaddedReleaseQueue extends BaselineReleaseQueue {
    private static final VarHandle DIRTY;

    static {
        try {
            DIRTY = MethodHandles.lookup().findVarHandle(UnpaddedReleaseQueue.class, "dirty", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through DIRTY
    private volatile boolean dirty;

    /** Creates an empty queue. */
    public UnpaddedReleaseQueue() {}

    @Override
    public ArrayList<Object> takeIfDirty() {
        if (!(boolean) DIRTY.getAcquire(this)) {
            return null;
        }
        if (!DIRTY.compareAndSet(this, true, false)) {
            return null;
        }
        return swapBatch();
    }

    @Override
    protected void raiseDirty() {
        DIRTY.setRelease(this, true);
    }
}
