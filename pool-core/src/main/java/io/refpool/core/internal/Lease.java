package io.refpool.core.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One reference in an object's shared count held by one thread, which counts its own handles on
 * the object here instead of in the shared count ({@link Leases}).
 *
 * <pre>
 *   state            to               by
 *   n &gt;= 0           n + 1            {@link #tryBorrow}: the owner, attached (a handle or a call)
 *   n &gt;= 1           n - 1            {@link #giveBack}: the close of a handle or call borrowed here,
 *                                     any thread
 *   0                ENDED            {@link #steal}: a revocation, a sweep, or the owner making room
 *   n &gt;= 1           n | REVOKED      {@link #steal}: the lease ends when its last borrow comes back
 *   REVOKED          ENDED            {@link #giveBack} bringing n to 0, or {@link #steal} finding it so
 * </pre>
 *
 * <p>Whichever call moves the state to {@code ENDED} (one CAS decides) gives the lease's reference
 * back to the object's shared count, so it is given back exactly once, and never while a handle
 * borrowed here is open: {@code n} counts them, and only a state with {@code n = 0} ends. A revoked
 * lease lends nothing more ({@link #tryBorrow} fails), so its {@code n} only falls.
 *
 * <p>The state is written by its owner on every borrow and give-back, and by other threads only to
 * end it, so it sits on a line of its own ({@link LinePad} before, a pad after).
 */
final class Lease<K, V> extends LeaseFields {
    /** Set once the lease is revoked with borrows still open; the low bits still count them. */
    static final int REVOKED = 1 << 30;
    /** The lease's reference was given back, or is being given back by the thread that ended it. */
    static final int ENDED = -1;

    private static final VarHandle STATE =
            FieldHandles.find(MethodHandles.lookup(), LeaseFields.class, "state", int.class);
    private static final VarHandle USED =
            FieldHandles.find(MethodHandles.lookup(), LeaseFields.class, "used", boolean.class);

    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6, q7;

    /**
     * The leased object; cleared by the thread that ended the lease once it gave the reference back
     * ({@link #forget}), so a thread's table that still holds the ended lease does not keep the
     * object reachable. Read only while the lease lends (a borrow open, or its ender before the
     * clear); a stale read elsewhere sees an object the lease no longer matches.
     */
    Entry<K, V> entry;
    /** The owning thread: only it borrows, and a sweep asks whether it still runs. */
    final Thread owner;

    /** A lease on {@code entry}, taking over a reference the owner holds, with that one borrow open. */
    Lease(Entry<K, V> entry, Thread owner) {
        this.entry = entry;
        this.owner = owner;
        STATE.setRelease(this, 1);
        USED.setOpaque(this, true);
    }

    /**
     * {@return the object of {@code lease}, a lease the caller just borrowed from}; for a handle,
     * whose signatures name no lease (see {@code PooledHandle})
     */
    @SuppressWarnings("unchecked")
    static <K, V> Entry<K, V> entryOf(Object lease) {
        return ((Lease<K, V>) lease).entry;
    }

    /** {@return whether the owner borrowed from this lease}: false once it is revoked or ended */
    boolean tryBorrow() {
        int w = (int) STATE.getVolatile(this);
        while (w >= 0 && (w & REVOKED) == 0) {
            int witness = (int) STATE.compareAndExchange(this, w, w + 1);
            if (witness == w) {
                if (!(boolean) USED.getOpaque(this)) {
                    USED.setOpaque(this, true);
                }
                return true;
            }
            w = witness;
        }
        return false;
    }

    /**
     * Gives one borrow back. @return whether this call ended a revoked lease: the caller then gives
     * the lease's reference back to the object
     */
    boolean giveBack() {
        int after = (int) STATE.getAndAdd(this, -1) - 1;
        return after == REVOKED && STATE.compareAndSet(this, REVOKED, ENDED);
    }

    /**
     * Revokes the lease. @return whether this call ended it (no borrow open): the caller then gives
     * the lease's reference back to the object; otherwise the last borrow's {@link #giveBack} does,
     * or the lease had ended already
     */
    boolean steal() {
        int w = (int) STATE.getVolatile(this);
        for (; ; ) {
            if (w == ENDED) {
                return false;
            }
            if (w == 0 || w == REVOKED) {
                int witness = (int) STATE.compareAndExchange(this, w, ENDED);
                if (witness == w) {
                    return true;
                }
                w = witness;
                continue;
            }
            if ((w & REVOKED) != 0) {
                return false; // revoked already, borrows open: the last give-back ends it
            }
            int witness = (int) STATE.compareAndExchange(this, w, w | REVOKED);
            if (witness == w) {
                return false;
            }
            w = witness;
        }
    }

    /**
     * {@link #steal}, but only of a lease with no borrow open: a lease in use is left as it is.
     * @return whether this call ended it
     */
    boolean stealIfUnborrowed() {
        return STATE.compareAndSet(this, 0, ENDED);
    }

    /** The lease ended and its reference went back: it lets go of the object. */
    void forget() {
        entry = null;
    }

    /** {@return whether the lease ended} */
    boolean hasEnded() {
        return (int) STATE.getVolatile(this) == ENDED;
    }

    /** {@return the borrows open now}, or -1 once it ended (diagnostics and tests) */
    int borrows() {
        int w = (int) STATE.getVolatile(this);
        return w == ENDED ? -1 : w & ~REVOKED;
    }

    /**
     * {@return whether the owner borrowed since the last call}; clears the mark. A sweep's question:
     * a lease unused between two sweeps is given back.
     */
    boolean takeUsed() {
        if ((boolean) USED.getOpaque(this)) {
            USED.setOpaque(this, false);
            return true;
        }
        return false;
    }

    @Override
    public String toString() {
        int w = (int) STATE.getVolatile(this);
        Entry<K, V> leased = entry;
        return "Lease[" + (leased == null ? "ended" : Keys.describe(leased.key)) + ", thread " + Threads.describe(owner)
                + ", "
                + (w == ENDED ? "ended" : (w & ~REVOKED) + " borrowed" + ((w & REVOKED) != 0 ? ", revoked" : ""))
                + "]";
    }
}

/** The words of a {@link Lease} its owner writes, after {@link LinePad}'s 64 bytes. */
abstract class LeaseFields extends LinePad {
    /** Borrows open, plus {@link Lease#REVOKED}, or {@link Lease#ENDED}. */
    @SuppressWarnings("unused") // accessed through STATE
    volatile int state;

    /** Set by a borrow, cleared by a sweep that finds none open: opaque on both sides, a missed mark costs a lease. */
    boolean used;
}
