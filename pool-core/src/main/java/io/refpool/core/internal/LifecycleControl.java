package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.PoolClosedException;
import java.util.Objects;

/**
 * Lifecycle control on demand: {@code flush()} applies what is pending, {@code invalidate(key)}
 * retires a key's object, {@code clearIdle()} disposes the idle ones. Each attaches as needed
 * (nested if the thread is attached already) through the closure form.
 *
 * <pre>
 *   object        to                    by
 *   live          retired (vacated)     invalidate: the slot lets go, holders keep it; disposed by
 *                                       the release that brings it to 0 (EndOfLife.reachedZero); its
 *                                       successor may exist before it is disposed
 *   idle          DISPOSED              invalidate or clearIdle: the claim from exactly 0
 *                                       ({@link EndOfLife#disposeIdle}), then out of the cache, then disposed;
 *                                       the slot keeps it until its disposer returns
 * </pre>
 */
public final class LifecycleControl<K, V> {
    private final PoolState pool;
    private final Attacher<K, V> attacher;
    private final SlotTable<K, V> slots;
    private final DeferredReleases<K, V> releases;
    private final EndOfLife<K, V> endOfLife;
    /** {@code null} without an idle cache. */
    private final IdleTier<K, V> idle;
    /** {@code null} without thread leases. */
    private final Leases<K, V> leases;

    LifecycleControl(
            PoolState pool,
            Attacher<K, V> attacher,
            SlotTable<K, V> slots,
            DeferredReleases<K, V> releases,
            EndOfLife<K, V> endOfLife,
            IdleTier<K, V> idle,
            Leases<K, V> leases) {
        this.leases = leases;
        this.pool = pool;
        this.attacher = attacher;
        this.slots = slots;
        this.releases = releases;
        this.endOfLife = endOfLife;
        this.idle = idle;
    }

    /**
     * Applies every release pending when called, attaching as needed, and waits for batches other
     * threads are applying. On a pool whose close has begun it waits for the close to finish (the
     * close applies what is pending), unless the close may wait for this thread, then applies the
     * releases of handles closed since, which drainer threads apply too.
     */
    public void flush() {
        AttachState s;
        if (pool.isClosed() && attacher.state().depth == 0) {
            s = afterClose();
        } else {
            try {
                s = attacher.enterClosure("flush()"); // nested if attached, closed or not
            } catch (PoolClosedException closing) {
                s = afterClose();
            }
        }
        if (s == null) {
            return;
        }
        int level = s.depth;
        try {
            // entered outermost: the attachment is the flush's own
            releases.flush(s, level == 1, slots::mayBeAwaitedOnThisThread);
        } catch (InterruptedException e) { // those releases are still applied, by the thread applying them
            throw Waits.interrupted("the releases another thread is applying in pool '" + pool.name() + "'", e);
        } finally {
            attacher.exitClosure(s, level);
            if (pool.isClosed()) {
                attacher.forgetThread(); // as close does: a closed pool keeps no state on this thread
            }
        }
    }

    /**
     * {@return this thread's state, attached to a pool whose close has finished}, or {@code null} if
     * the flush must return at once: the thread runs the close, or the close may wait for it (it
     * runs a factory with its attachment suspended by the pool, or a warm-up's). A thread attached already does not
     * come here: its flush nests.
     */
    private AttachState afterClose() {
        try {
            if (attacher.isAttachedOrSuspendedByPool() || slots.createsOnThisThread() || !pool.awaitCloseFinished()) {
                return null;
            }
            return attacher.enterClosureAfterClose();
        } catch (InterruptedException e) {
            attacher.forgetThread();
            throw Waits.interrupted("the close of pool '" + pool.name() + "', or its gate after it", e);
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
        AttachState s = attacher.enterClosure("invalidate", key);
        int level = s.depth;
        try {
            Entry<K, V> entry = slots.entry(key);
            return entry != null && retire(entry, s, DisposalCause.INVALIDATED);
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /**
     * {@code pool.invalidate(key, object)}: retires the key's current object only if it is {@code
     * object}, so a caller that saw its object go bad never retires the healthy replacement a
     * racing thread made.
     *
     * @return whether {@code object} was retired by this call
     */
    public boolean invalidate(K key, V object) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(object, "object");
        AttachState s = attacher.enterClosure("invalidate", key);
        int level = s.depth;
        try {
            Entry<K, V> entry = slots.entry(key);
            return entry != null && entry.value == object && retire(entry, s, DisposalCause.INVALIDATED);
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /**
     * {@code Handle.invalidate()}: retires exactly the object of {@code entry}, which the calling
     * handle holds, whether or not its key has a newer object meanwhile (which stays untouched).
     *
     * @return whether this call retired it (false: it was retired already)
     */
    boolean retireHeld(Entry<K, V> entry) {
        return retireHeld(entry, DisposalCause.RETIRED);
    }

    /** {@link #retireHeld(Entry)} with {@code cause}: also the retirement an interrupter asked for. */
    boolean retireHeld(Entry<K, V> entry, DisposalCause cause) {
        AttachState s = attacher.enterClosure("invalidate", entry.key);
        int level = s.depth;
        try {
            return retire(entry, s, cause);
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /**
     * Retires {@code entry} with {@code cause}. Idle: disposed now, and it keeps its slot until the
     * disposer returns, so the key's next object waits for it. In use: the slot lets go at once (if
     * it still holds this entry), so new acquires get a new object while the holders keep this one,
     * disposed when its count reaches 0 ({@code EndOfLife.reachedZero}).
     */
    private boolean retire(Entry<K, V> entry, AttachState s, DisposalCause cause) {
        if (!entry.retire(cause)) {
            return false;
        }
        if (leases != null) {
            leases.revoke(entry, s); // their references go back now: at zero it is disposed
        }
        if (!endOfLife.disposeIdle(entry, s, cause) && entry.count() > 0) {
            // the key's hashCode or equals may throw here: the retirement stands, and an acquire
            // that finds the retired object still in the slot lets it go (SlotTable#dropRetired)
            slots.vacate(entry);
        }
        return true;
    }

    /**
     * Disposes every object that is idle (count 0) when the scan reaches it, attached.
     *
     * @return how many this call disposed
     */
    public int clearIdle() {
        AttachState s = attacher.enterClosure("clearIdle()");
        int level = s.depth;
        try {
            if (leases != null) {
                leases.revokeUnborrowed(s); // what a lease kept live with no handle open goes idle first
                releases.applyAll(s); // and what a sweep under way ended, queued before revokeUnborrowed returned
            }
            return endOfLife.clearIdle(s);
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /** {@return how many objects the idle cache holds, after its pending maintenance} (diagnostics) */
    public long cachedCount() {
        if (idle == null) {
            return 0;
        }
        idle.cleanUp();
        return idle.size();
    }

    /**
     * {@return how many objects the idle cache holds now, its pending maintenance not run} (for tests
     * of the bound that puts leave behind)
     */
    public long cachedCountAsItIs() {
        return idle == null ? 0 : idle.size();
    }
}
