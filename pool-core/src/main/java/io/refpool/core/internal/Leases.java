package io.refpool.core.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Thread leases: a thread that uses an object again and again keeps one reference to it in the
 * object's shared count, a {@link Lease}, and counts its own handles on the object in the lease,
 * a word only it writes while nothing revokes it. A request that borrows from its thread's lease
 * writes no line another core's request writes; the shared count is written when a lease is made
 * or ends. On only with {@code Builder.threadLeases}.
 *
 * <pre>
 *   lease          to              by
 *   none           made (1 borrow) {@link #adopt}: the thread's reference from an ordinary acquire
 *                                  becomes the lease's, if the thread made enough acquires and its
 *                                  table has room (a free slot, or one whose lease lends nothing now)
 *   made           borrowed        {@link #borrow}, attached: {@code Lease.tryBorrow}, then the object
 *                                  is checked not retired
 *   any            ended           a revocation: {@link #revoke} (the object is retired),
 *                                  {@link #revokeUnborrowed} ({@code clearIdle}, a creation short
 *                                  of capacity), {@link #revokeAll} (close), {@link #revokeEvery}
 *                                  (an acquirer joined the line for capacity), {@link #sweep}
 *                                  (unused since the last sweep, or its thread is gone; every
 *                                  lease in a pool with revive checks), the owner making room; a
 *                                  lease with borrows open ends when the last comes back
 * </pre>
 *
 * <p>Whoever ends a lease gives its reference back: at once if that thread is attached, else as a
 * pending release, as a handle closed off the attachment. An object's leases are listed on it
 * ({@link LeaseHolders}), written only when a lease is made or ends. A lease is made under the list's
 * lock and only if the object is not retired and the pool not closed; a retirement (or the close)
 * sets its flag first and then takes the lock to revoke, so no lease is made that it misses.
 *
 * <p>An object some thread leases never goes idle, so it is not in the idle cache, and its count
 * does not reach zero until the lease ends: that is what a pool with leases trades for requests
 * that scale with cores. The sweep bounds it: a lease its thread has not used for between one and
 * two sweep periods is given back.
 */
final class Leases<K, V> {
    /** Slots in a thread's table of leases, per pool: a power of two. */
    static final int TABLE = 256;
    /** How many slots from an object's own a lease may sit in. */
    static final int PROBES = 8;
    /** How many ordinary acquires a thread makes before its first lease. */
    static final int ACQUIRES_BEFORE_LEASING = 32;

    /** The attached release of a reference ({@link Handles#releaseAttached}). */
    @FunctionalInterface
    interface References<K, V> {
        void releaseAttached(Entry<K, V> entry, AttachState s);
    }

    private final PoolState pool;
    private final SlotTable<K, V> slots;
    private final DeferredReleases<K, V> releases;
    private final References<K, V> references;
    /** Whether acquirers wait in line for capacity now ({@link Capacity#waiters}): no lease is made. */
    private final BooleanSupplier lineWaiting;
    /**
     * Whether the pool checks objects at zero and on revival (a validator, {@code maxLifetime}):
     * then every sweep ends every lease, so each leased object reaches zero and is checked again.
     */
    private final boolean checked;

    private final ScheduledFuture<?> sweeps;
    /**
     * Held by a sweep for its whole pass, and by the close before it revokes: a close then finds
     * every release a sweep made queued, and no sweep runs after it ({@link #sweptOut}).
     */
    private final Object sweeping = new Object();
    /** Set by the close under {@link #sweeping}: sweeps end no more leases. */
    private boolean sweptOut;
    /**
     * Leases the sweeper's thread is ending: each counted before its end is tried and until its
     * reference is queued, so a thread that needs that reference applied (a creation short of
     * capacity, {@code clearIdle}) waits for it to be queued ({@link #awaitSweptQueued}).
     */
    private final AtomicInteger sweptUnqueued = new AtomicInteger();
    /** How long no lease is made once capacity ran short of them: one sweep period. */
    private final long pauseNanos;
    /**
     * When ({@code System.nanoTime()}, never 0) the pause of leasing that capacity running short
     * set may end, or 0: no pause. Set by {@link #pause}, read by each leasing acquire, cleared by
     * the first sweep after that time, with a compare-and-set, so a pause set meanwhile stays.
     */
    private final AtomicLong pausedUntil = new AtomicLong();
    /** Whether capacity running short pauses leasing; a model test turns it off. */
    private boolean pauses = true;
    /** Acquires a thread makes before its first lease; tests lower it. */
    private int acquiresBeforeLeasing = ACQUIRES_BEFORE_LEASING;

    Leases(
            PoolState pool,
            SlotTable<K, V> slots,
            DeferredReleases<K, V> releases,
            References<K, V> references,
            BooleanSupplier lineWaiting,
            boolean checked,
            long sweepPeriodNanos) {
        this.pool = pool;
        this.slots = slots;
        this.releases = releases;
        this.references = references;
        this.lineWaiting = lineWaiting;
        this.checked = checked;
        this.pauseNanos = sweepPeriodNanos;
        this.sweeps = LeaseSweeper.schedule(this, sweepPeriodNanos);
    }

    /** Ends a pause of leasing ({@link #pause}) now; for tests. */
    void resumeForTests() {
        pausedUntil.set(0);
    }

    /** Capacity running short no longer pauses leasing; for tests, before any thread attaches. */
    void neverPauseForTests() {
        pauses = false;
    }

    /** Makes threads lease from their first acquire on; for tests, before any thread attaches. */
    void leaseAtOnceForTests() {
        acquiresBeforeLeasing = 0;
    }

    /**
     * {@return a borrow of the calling thread's lease on the object of {@code key}}, or {@code null}
     * if the thread has none (or it ends): the caller then acquires as usual. For an attached
     * thread; the borrow is given back with {@link #giveBack}.
     */
    @SuppressWarnings("unchecked")
    Lease<K, V> borrow(K key, AttachState s) {
        Lease<?, ?>[] table = s.leases;
        if (table == null) {
            return null;
        }
        if (pool.isClosed()) {
            s.leases = null; // every lease ended with the close: the table lets go of them
            return null;
        }
        Entry<K, V> entry = slots.entry(key);
        if (entry == null) {
            return null;
        }
        int h = entry.leaseHash();
        for (int i = 0; i < PROBES; i++) {
            int at = (h + i) & (TABLE - 1);
            Lease<?, ?> lease = table[at];
            if (lease != null && lease.entry == entry) {
                Lease<K, V> own = (Lease<K, V>) lease;
                if (own.tryBorrow()) {
                    if (!entry.isRetired()) {
                        return own;
                    }
                    giveBack(own, s); // retired meanwhile: its retirement revokes the lease
                }
                if (table[at] == lease) { // not a disposer's reentrant call's new lease
                    table[at] = null; // ended or revoked: it lends no more; look on, for a newer one
                }
            }
        }
        return null;
    }

    /**
     * Makes the calling thread's reference to {@code entry}, just acquired, the reference of a new
     * lease with that one borrow, if the thread leases by now, its table has room and nobody waits
     * in line for capacity.
     *
     * @return the lease, whose borrow the caller gives back with {@link #giveBack}; or {@code null}:
     *     the reference stays the caller's, released as usual
     */
    Lease<K, V> adopt(Entry<K, V> entry, AttachState s) {
        Lease<?, ?>[] table = s.leases;
        if (table == null) {
            if (s.unleasedAcquires < acquiresBeforeLeasing) {
                s.unleasedAcquires++;
                return null;
            }
            table = s.leases = new Lease<?, ?>[TABLE];
        }
        if (entry.isRetired() || lineWaiting.getAsBoolean() || pausedNow()) { // capacity is short: none leased
            return null;
        }
        int at = room(table, entry.leaseHash(), s);
        if (at < 0 || !isFree(table[at])) { // none, or a disposer that room() ran took it reentrantly
            return null;
        }
        Lease<K, V> kept = reclaim(entry, s);
        if (kept != null) {
            table[at] = kept;
            return kept;
        }
        Lease<K, V> lease = new Lease<>(entry, s.thread);
        pool.hook(PoolHooks.Point.LEASE_MAKING);
        if (!entry.holders().add(lease, entry, pool)) {
            return null; // retired or closed meanwhile
        }
        if (lineWaiting.getAsBoolean()) {
            // an acquirer joined the line meanwhile: its revocation listed the holders before this
            // lease, or this read sees it counted (the list's lock orders the two), so end it here,
            // at its one borrow's give-back
            lease.steal();
        }
        table[at] = lease;
        return lease;
    }

    /** {@return whether leasing pauses now}: one volatile read; the sweep that finds it over ends it */
    private boolean pausedNow() {
        return pausedUntil.get() != 0;
    }

    /**
     * Capacity ran short of leases: a creation needed a permit that only leases held, or an
     * acquirer joined the line. No lease is made until the first sweep a period or more later
     * (one to two periods), so a bound below the objects the threads use runs as a pool without
     * leases would, instead of ending and making leases on every creation; the sweeps go on as
     * usual.
     */
    private void pause() {
        if (pauses) {
            long until = System.nanoTime() + pauseNanos;
            pausedUntil.set(until == 0 ? 1 : until);
        }
    }

    private static boolean isFree(Lease<?, ?> slot) {
        return slot == null || slot.hasEnded();
    }

    /**
     * A lease this thread made on {@code entry} under an attach state it lost (a pool thread that
     * clears its thread-locals between tasks), borrowed for the caller, whose own reference goes
     * back: {@code null} if there is none, or it lends no more.
     */
    @SuppressWarnings("unchecked")
    private Lease<K, V> reclaim(Entry<K, V> entry, AttachState s) {
        LeaseHolders holders = entry.holdersIfAny();
        Lease<K, V> kept = holders == null ? null : (Lease<K, V>) holders.ownedBy(s.thread);
        if (kept == null || !kept.tryBorrow()) {
            return null;
        }
        if (entry.isRetired()) { // its retirement is revoking the lease: leave it to that
            giveBack(kept, s);
            return null;
        }
        references.releaseAttached(entry, s); // the lease holds the object: the count stays above zero
        return kept;
    }

    /** {@return a slot for a new lease near {@code h}, emptied if need be}, or -1 if all lend now */
    private int room(Lease<?, ?>[] table, int h, AttachState s) {
        for (int i = 0; i < PROBES; i++) {
            int at = (h + i) & (TABLE - 1);
            if (isFree(table[at])) {
                return at;
            }
        }
        int start = s.leaseVictim++;
        for (int i = 0; i < PROBES; i++) {
            int at = (h + ((start + i) & (PROBES - 1))) & (TABLE - 1);
            Lease<?, ?> lease = table[at];
            if (lease.stealIfUnborrowed()) {
                ended(lease, s);
                return at;
            }
        }
        return -1;
    }

    /** Gives back a borrow of {@code lease}; {@code s} is the calling thread's state. */
    void giveBack(Lease<K, V> lease, AttachState s) {
        if (lease.giveBack()) {
            ended(lease, s);
        }
    }

    /** Revokes every lease on {@code entry}, which the caller just retired; {@code s} attached. */
    void revoke(Entry<K, V> entry, AttachState s) {
        LeaseHolders holders = entry.holdersIfAny();
        if (holders == null) {
            return;
        }
        for (Lease<?, ?> lease : holders.snapshot()) {
            if (lease.steal()) {
                ended(lease, s);
            }
        }
    }

    /**
     * {@code clearIdle()}, or a creation short of capacity: ends every lease that lends nothing now.
     * @return how many
     */
    int revokeUnborrowed(AttachState s) {
        int[] ended = new int[1];
        slots.forEachEntry(entry -> {
            LeaseHolders holders = entry.holdersIfAny();
            if (holders != null) {
                for (Lease<?, ?> lease : holders.snapshot()) {
                    if (lease.stealIfUnborrowed()) {
                        ended(lease, s);
                        ended[0]++;
                    }
                }
            }
        });
        // after the pass: a lease the sweeper ended before this pass reached it (or before it began)
        // was counted before its end, so its reference is queued for the caller once this returns
        awaitSweptQueued();
        return ended[0];
    }

    /**
     * The pool's close, which set the closed flag first: waits for a sweep under way, so that what
     * it ended is queued for the close to apply, and revokes every lease; sweeps no more.
     */
    void revokeAll(AttachState s) {
        synchronized (sweeping) {
            sweptOut = true;
        }
        sweeps.cancel(false);
        revokeEvery(s);
    }

    /**
     * An acquirer joined the line for capacity: ends every lease, each with borrows open at its
     * last give-back, so every object only leases kept live reaches zero and frees its permit for
     * the line. No lease is made while anyone is in line ({@link #adopt}).
     */
    void revokeEvery(AttachState s) {
        pause();
        slots.forEachEntry(entry -> revoke(entry, s));
    }

    /**
     * A creation short of capacity: ends every lease that lends nothing now ({@link
     * #revokeUnborrowed}), and pauses leasing ({@link #pause}), whether it ended any or not.
     */
    void revokeForCapacity(AttachState s) {
        revokeUnborrowed(s);
        pause();
    }

    /**
     * Waits until every lease the sweeper's thread ended has its reference queued: between the end
     * and the queueing the reference is neither the lease's nor pending, and a caller that applies
     * what is pending next would miss it. The sweeper takes only the release queue's lock meanwhile,
     * which nobody holds across a wait.
     */
    private void awaitSweptQueued() {
        if (sweptUnqueued.get() == 0 || Thread.holdsLock(sweeping)) {
            return; // none in flight, or this is the sweeper (a listener it reported to): its own ends
        }
        pool.hook(PoolHooks.Point.SWEEP_AWAITED);
        for (int spins = 0; sweptUnqueued.get() != 0; spins++) {
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /**
     * One sweep: ends each lease its thread did not use since the last sweep, or whose thread is
     * gone (with borrows open, that thread leaked a handle: the lease ends when it is closed). In a
     * pool with revive checks it ends every lease (one in use when its borrows come back): each
     * leased object then reaches zero, where its age is checked, and the next acquire revives it,
     * checked, before a new lease is made on it ({@link LeaseHolders#checkDue}).
     *
     * @param s the state of the thread that runs it, which gives the references back as it would
     *     a handle's; {@code null} on the sweeper's thread, which only queues them
     */
    void sweep(AttachState s) {
        synchronized (sweeping) {
            if (sweptOut || pool.isClosed()) {
                sweeps.cancel(false);
                return;
            }
            long until = pausedUntil.get();
            if (until != 0 && System.nanoTime() - until >= 0) {
                pausedUntil.compareAndSet(until, 0); // not a pause set since
            }
            slots.forEachEntry(entry -> {
                LeaseHolders holders = entry.holdersIfAny();
                if (holders != null) {
                    // checked: listed and marked due its check at once, before the ends, so no
                    // lease is made again unchecked, nor after the listing and before the mark
                    Lease<?, ?>[] listed = holders.sweepList(checked);
                    pool.hook(PoolHooks.Point.SWEEP_LISTED);
                    for (Lease<?, ?> lease : listed) {
                        boolean gone = !lease.owner.isAlive();
                        if (s == null) {
                            sweptUnqueued.incrementAndGet(); // before the end: see awaitSweptQueued
                        }
                        try {
                            // a lease lending now is in use, and its mark stays for the next sweep
                            if (gone || checked
                                    ? lease.steal()
                                    : lease.borrows() == 0 && !lease.takeUsed() && lease.stealIfUnborrowed()) {
                                ended(lease, s);
                            }
                        } finally {
                            if (s == null) {
                                sweptUnqueued.decrementAndGet();
                            }
                        }
                    }
                }
            });
        }
    }

    /**
     * {@code lease} just ended on this thread: off its object's list, and its reference given back,
     * now if {@code s} (this thread's state) is attached, else as a pending release; {@code null}:
     * the sweeper, which only queues it and never runs a drain or calls the pool's executor, so no
     * pool's disposer runs on the thread every pool's sweeps share.
     */
    @SuppressWarnings("unchecked")
    void ended(Lease<?, ?> lease, AttachState s) {
        Entry<K, V> entry = (Entry<K, V>) lease.entry;
        entry.holders().remove(lease);
        if (s == null) {
            releases.enqueueFromTimer(entry);
        } else if (s.depth > 0 && s.thread == Thread.currentThread()) {
            references.releaseAttached(entry, s);
        } else {
            releases.enqueue(entry);
        }
        lease.forget();
    }

    /** {@return the leases not ended on {@code entry}}; for tests */
    static int leasesOn(Entry<?, ?> entry) {
        LeaseHolders holders = entry.holdersIfAny();
        return holders == null ? 0 : holders.snapshot().length;
    }

    /** A sweep on the sweeper's thread threw: reported, and the next sweep runs as planned. */
    void sweepFailed(Throwable t) {
        pool.report(
                io.refpool.core.PoolError.Kind.DRAINER_FAILED,
                null,
                "a sweep of thread leases failed; the next runs as planned",
                t);
    }
}
