package io.refpool.core.internal;

import io.refpool.core.internal.ReleaseQueueHooks.Point;
import java.util.ArrayList;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The deferred-release queue: releases that happened off-attachment, guarded by a lock, plus a
 * {@code dirty} flag that tells an attaching thread whether there is anything to apply.
 *
 * <h2>Implementation notes</h2>
 *
 * <p>This base class owns the list and its lock; subclasses own the flag and the check
 * ({@link #takeIfDirty()}). The production subclass is {@link DirtyFlagReleaseQueue}; the benchmark
 * module measures older checks against it by subclassing this class.
 *
 * <p><b>Enqueue</b> (any thread): lock, add, unlock, <em>then</em> raise the flag with a release
 * store. The flag is raised after the item is visible under the lock, so a drainer that sees the flag
 * and then takes the lock finds the item. Raising it first would let a drainer clear the flag and
 * swap out the list before the add, stranding the item with the flag down.
 *
 * <p><b>Drain</b> (an attached thread): swap the whole list out under the lock and apply it outside
 * the lock, so user code (disposers) never runs under it.
 */
public abstract class ReleaseQueue {
    /** Guards {@code pending}; never held while user code runs. */
    private final ReentrantLock queueLock = new ReentrantLock();

    private ArrayList<Object> pending = new ArrayList<>();

    /** Written under the lock on every enqueue; read for statistics. */
    private volatile int size;

    private volatile ReleaseQueueHooks hooks;

    protected ReleaseQueue() {}

    /**
     * Adds a pending release: lock, add, unlock, then raise the flag (release store).
     *
     * @param release what to apply when attached
     * @return the number of pending releases right after the add
     */
    public final int enqueue(Object release) {
        int after;
        lockQueue();
        try {
            pending.add(release);
            after = pending.size();
            size = after;
        } finally {
            queueLock.unlock();
        }
        hook(Point.BETWEEN_ADD_AND_FLAG);
        raiseDirty();
        return after;
    }

    /**
     * The attach-side check: returns the pending releases to apply, or {@code null} when there is
     * nothing to do. Implementations decide how cheaply "nothing to do" is found out.
     *
     * @return the batch, owned by the caller from now on, or {@code null}
     */
    public abstract ArrayList<Object> takeIfDirty();

    /** Raises the flag with (at least) release ordering, after an add. */
    protected abstract void raiseDirty();

    /** {@return whether the flag is raised, read with acquire ordering (diagnostics)} */
    public abstract boolean isDirty();

    /**
     * Swaps the whole pending list out under the lock.
     *
     * @return the batch, or {@code null} if the list was empty
     */
    protected final ArrayList<Object> swapBatch() {
        lockQueue();
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

    /** {@return the number of pending releases (diagnostics: may be stale at once)} */
    public final int size() {
        return size;
    }

    /** Installs the test seam; {@code null} turns it off. */
    public final void setHooks(ReleaseQueueHooks hooks) {
        this.hooks = hooks;
    }

    private void lockQueue() {
        hook(Point.QUEUE_LOCK);
        queueLock.lock();
    }

    private void hook(Point point) {
        ReleaseQueueHooks h = hooks;
        if (h != null) {
            h.at(point);
        }
    }
}
