package io.refpool.bench.baseline;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;

/**
 * Baseline: a dirty flag that every attach clears with an atomic {@code getAndSet}, pending or not.
 * Correct, but each attach writes the flag's cache line, so attaching threads bounce it between
 * cores even when nothing is pending, which refpool's one acquire load avoids. The enqueue side is
 * the same as refpool's: lock, add, unlock, then a release store of the flag.
 */
public final class SwapFlagReleaseQueue extends BaselineReleaseQueue {
    private static final VarHandle DIRTY;

    static {
        try {
            DIRTY = MethodHandles.lookup().findVarHandle(SwapFlagReleaseQueue.class, "dirty", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through DIRTY
    private volatile boolean dirty;

    /** Creates an empty queue. */
    public SwapFlagReleaseQueue() {}

    @Override
    public ArrayList<Object> takeIfDirty() {
        if (!(boolean) DIRTY.getAndSet(this, false)) {
            return null;
        }
        return swapBatch();
    }

    @Override
    protected void raiseDirty() {
        DIRTY.setRelease(this, true);
    }
}
