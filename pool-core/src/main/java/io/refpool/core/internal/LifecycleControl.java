package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.PoolClosedException;
import java.util.Objects;
import java.util.concurrent.CancellationException;

/**
 * Lifecycle control on demand: {@code flush()} applies what is pending, {@code invalidate(key)}
 * retires a key's object, {@code clearIdle()} disposes the idle ones. Each attaches as needed
 * (nested if the thread is attached already) through the closure form.
 *
 * <pre>
 *   object        to                    by
 *   live          retired (vacated)     invalidate: the slot lets go, holders keep it; disposed by
 *                                       the release that brings it to 0 (Capacity.reachedZero); its
 *                                       successor may exist before it is disposed
 *   idle          DISPOSED              invalidate or clearIdle: the claim from exactly 0
 *                                       ({@link #disposeIdle}), then out of the cache, then disposed;
 *                                       the slot keeps it until its disposer returns
 * </pre>
 */
public final class LifecycleControl<K, V> {
    private final PoolCore<K, V> core;

    LifecycleControl(PoolCore<K, V> core) {
        this.core = core;
    }

    /**
     * Applies every release pending when called, attaching as needed, and waits for batches other
     * threads are applying. A closed pool has none: close applied them.
     */
    public void flush() {
        if (core.isClosed()) {
            return;
        }
        AttachState s;
        try {
            s = core.attacher.enterClosure("flush()");
        } catch (PoolClosedException closedMeanwhile) {
            return;
        }
        int level = s.depth;
        try {
            core.releases.flush(s);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while flush() waited for releases another thread is"
                    + " applying; the interrupt status is kept, and those releases are still applied");
        } finally {
            core.attacher.exitClosure(s, level);
        }
    }

    /**
     * Retires the key's current object: new acquires get a new one; holders keep this one, which is
     * disposed when its last handle closes, at once if it is idle.
     *
     * @return whether an object was retired (false: the key had none, or it was retired already)
     */
    public boolean invalidate(K key) {
        Objects.requireNonNull(key, "key");
        AttachState s = core.attacher.enterClosure("invalidate()");
        int level = s.depth;
        try {
            Entry<K, V> entry = core.slots.entry(key);
            if (entry == null || !entry.retire()) {
                return false;
            }
            // idle: disposed now, and it keeps its slot until the disposer returns, so the key's next
            // object waits for it; in use: the slot lets go at once, so new acquires get a new object
            // while the holders keep this one, disposed when its count reaches 0 (Capacity.reachedZero)
            if (!disposeIdle(entry, s, DisposalCause.INVALIDATED) && entry.count() > 0) {
                core.slots.vacate(entry);
            }
            return true;
        } finally {
            core.attacher.exitClosure(s, level);
        }
    }

    /**
     * Disposes every object that is idle (count 0) when the scan reaches it, attached.
     *
     * @return how many this call disposed
     */
    public int clearIdle() {
        AttachState s = core.attacher.enterClosure("clearIdle()");
        int level = s.depth;
        try {
            int[] cleared = {0};
            core.slots.forEachEntry(entry -> {
                if (entry.count() == 0 && disposeIdle(entry, s, DisposalCause.CLEARED)) {
                    cleared[0]++;
                }
            });
            return cleared[0];
        } finally {
            core.attacher.exitClosure(s, level);
        }
    }

    /**
     * Claims an object at count 0 and disposes it, taking it out of the idle cache first if the cache
     * holds it (a releaser's put that this misses sees the claim itself: {@code IdleTier.put}). The
     * cache is asked, not the object's mark: an entry can hold the object while it is marked
     * uncached (see {@code IdleTier}).
     *
     * @return whether this call claimed it (false: revived, or disposed already)
     */
    boolean disposeIdle(Entry<K, V> entry, AttachState s, DisposalCause cause) {
        if (!entry.tryDispose(cause)) {
            return false;
        }
        if (core.idle != null) {
            core.idle.remove(entry);
        }
        core.disposals.disposeClaimedInLoop(entry, s);
        return true;
    }

    /** {@return how many objects the idle cache holds, after its pending maintenance} (diagnostics) */
    public long cachedCount() {
        if (core.idle == null) {
            return 0;
        }
        core.idle.cleanUp();
        return core.idle.size();
    }
}
