package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.EvictionCause;
import io.refpool.core.PoolError;
import java.util.function.Consumer;

/**
 * The end of an object's life: every transition out of "live", and the one place that claims an
 * object for disposal ({@link Entry#tryDispose}).
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   object      to                       by
 *   live        zero                     a release that moved the count to 0: {@link #reachedZero}
 *   zero        live (served)            a waiter in line for capacity for the same key revives it
 *   zero        idle                     the idle cache takes it
 *   zero        DISPOSED                 no cache or the cache refused it (RELEASED), retired by
 *                                        invalidate (INVALIDATED), the pool closing (CLOSED), the
 *                                        line needing its permit (CAPACITY)
 *   zero        DISPOSED (LIFETIME)      too old, with a maximum lifetime (before any of the above
 *                                        but retired and closed)
 *   idle        live (revived)           an acquire's retain from 0 (Entry.tryRetain; not here), or
 *                                        its revive check ({@link Revival}) that passed
 *   idle        DISPOSED (checked)       {@link #disposeChecked}: the revive check failed
 *   idle        DISPOSED (evicted)       {@link #applyEviction}: idle since the cache decided
 *   idle        idle (put again)         {@link #applyEviction}: used since the cache took it
 *   idle        DISPOSED                 {@link #disposeIdle}: invalidate, clearIdle
 *   idle        DISPOSED (reclaimed)     {@link #reclaimOneIdle}, {@link #reclaimUncached}: a
 *                                        creation needs its permit
 *   idle        DISPOSED (closed)        {@link #disposeAllAtClose}
 *   created     DISPOSED                 {@link #unpublishable}: the key threw while publishing it
 *   live        zero (retired)           {@link #releaseRetired}: an acquire's reference to a retired
 *                                        object that kept its slot (the key threw) goes back
 * </pre>
 *
 * <p>Every disposal is one sequence ({@link #dispose}): the claim, a CAS from exactly 0 that fails
 * if the object was revived in between, so each object is disposed once and never while in use;
 * then the object leaves the idle cache if it may be there; then the disposer runs attached on the
 * claiming thread, in that thread's disposal loop ({@link Disposals}), or at once where the caller
 * needs the permit now; the disposal hands the object's permit on to the head waiter of the line.
 * A claimed object keeps its slot until its disposer has returned, so the key's next object waits
 * for it ({@link Entry#retirement}).
 */
final class EndOfLife<K, V> {
    /** Whether a disposal takes the object out of the idle cache. */
    private enum Uncache {
        /** It is not there: the cache refused it, or never had it. */
        NO,
        /** If its mark says the cache holds it, read after the claim. */
        IF_MARKED,
        /** Ask the cache: an entry can hold the object while its mark says uncached (see IdleTier). */
        YES
    }

    private final PoolState pool;
    private final PoolCounters counters;
    private final SlotTable<K, V> slots;
    /** {@code null} without an idle cache. */
    private final IdleTier<K, V> idle;
    /** {@code null} without revive checks. */
    private final Revival<K, V> revival;

    private final Capacity<K, V> capacity;
    private final Disposals<K, V> disposals;

    EndOfLife(
            PoolState pool,
            PoolCounters counters,
            SlotTable<K, V> slots,
            IdleTier<K, V> idle,
            Revival<K, V> revival,
            Capacity<K, V> capacity,
            Disposals<K, V> disposals) {
        this.revival = revival;
        this.pool = pool;
        this.counters = counters;
        this.slots = slots;
        this.idle = idle;
        this.capacity = capacity;
        this.disposals = disposals;
    }

    /**
     * The one disposal sequence: claim, out of the cache, dispose, which hands the permit on.
     *
     * @param s the claiming thread's state, to dispose in its loop; {@code null} to dispose now
     * @param evicted the eviction to count, or {@code null}
     * @return whether this call claimed it (false: revived, or disposed already)
     */
    private boolean dispose(
            Entry<K, V> entry, AttachState s, DisposalCause cause, EvictionCause evicted, Uncache uncache) {
        if (!entry.tryDispose(cause)) {
            return false;
        }
        if (evicted != null) {
            counters.evicted(evicted);
        }
        if (idle != null && (uncache == Uncache.YES || (uncache == Uncache.IF_MARKED && entry.isCached()))) {
            idle.remove(entry);
        }
        if (s == null) {
            disposals.disposeClaimed(entry);
        } else {
            disposals.disposeClaimedInLoop(entry, s);
        }
        return true;
    }

    // ---------------------------------------------------------------- count zero

    /** The last reference went: idle the object, serve a waiter of its key, or dispose it. */
    void reachedZero(Entry<K, V> entry, AttachState s) {
        pool.hook(PoolHooks.Point.REACHED_ZERO);
        counters.reachedZero(s);
        DisposalCause retired = entry.retiredAs();
        if (retired != null) { // invalidated while in use: it goes now, never to the cache
            dispose(entry, s, retired, null, Uncache.YES);
        } else if (pool.isClosed()) {
            dispose(entry, s, DisposalCause.CLOSED, null, Uncache.NO); // close emptied the cache already
        } else if (revival != null && revival.expired(entry)) { // too old: never to the cache nor a waiter
            dispose(entry, s, DisposalCause.LIFETIME, null, Uncache.YES);
        } else if (capacity.waiters() > 0) {
            if (!servedAtZero(entry, s)) { // no waiter for its own key took it: the line needs its permit
                // out of the cache too: an object revived from it keeps its entry (the lazy tier), and
                // a disposed one left there would hold a place of the bound until the cache evicts it
                dispose(entry, s, DisposalCause.CAPACITY, null, Uncache.YES);
            }
        } else if (idle == null || !idle.idle(entry)) { // no cache, or the cache refused it
            dispose(entry, s, DisposalCause.RELEASED, null, Uncache.NO);
        } else if (entry.count() == 0 && capacity.waiters() > 0) {
            // a waiter came meanwhile and may have looked for idle objects before the put: either it
            // sees this object in the cache, or this thread sees it in line
            if (!servedAtZero(entry, s)) { // a waiter for its own key takes it first
                dispose(entry, s, DisposalCause.CAPACITY, null, Uncache.YES);
            }
        }
    }

    /**
     * {@return whether waiters for its own key took {@code entry}, which this thread's release moved
     * to count 0} (false: nobody in line wants it, and it is still this thread's to settle). The
     * first waiter revives it, the others share it.
     */
    private boolean servedAtZero(Entry<K, V> entry, AttachState s) {
        boolean mine = true; // whether settling count 0 is still up to this thread
        while (capacity.hasWaiting(entry.key)) {
            // with revive checks, a CAS: a revive may have claimed the object at 0 for its check
            int before = revival == null ? entry.retainLive(counters, s) : entry.retainUnlessNegative(counters, s);
            if (before < 0) {
                // disposed meanwhile, or claimed by a revive check: the waiters stay in line (the
                // check's pass serves them, its failure's disposal hands the permit on)
                return true;
            }
            Capacity.LineWaiter<K, V> waiter = capacity.nextWaiting(entry.key);
            if (waiter != null && capacity.serve(waiter, entry)) {
                mine = false; // the waiter's reference now: its last release settles the next 0
            } else {
                mine = entry.release() == 0; // the wait ended first; at 0 again it is this thread's again
                if (mine) {
                    counters.reachedZero(s);
                }
                if (waiter == null) {
                    break;
                }
            }
        }
        return !mine;
    }

    /**
     * A creator could not publish {@code entry} (the key's {@code hashCode} or {@code equals} threw):
     * its reference goes and the object is disposed.
     */
    void unpublishable(Entry<K, V> entry, AttachState s) {
        entry.release();
        counters.reachedZero(s);
        dispose(entry, s, DisposalCause.CREATION_FAILED, null, Uncache.NO);
    }

    /**
     * An acquire's reference to a retired object it may not hand out goes back, disposing the object
     * at count 0: the object kept its key's slot because the key's {@code hashCode} or {@code equals}
     * threw when it was retired, or when a revive check that passed on it let go of the slot.
     */
    void releaseRetired(Entry<K, V> entry, AttachState s) {
        if (entry.release() == 0) {
            reachedZero(entry, s);
        }
    }

    // ---------------------------------------------------------------- idle objects

    /**
     * Applies the cache's eviction of an object. Idle since the cache decided (for expiry: since the
     * cache took it, whose clock runs from that put): disposed. Idle but used since: put back, so the
     * policy sees it anew. Live: the cache has let go of it, and its next idle puts it again. The
     * spell, not the cache, decides: Caffeine calls the listener inside its removal, so a drain in that
     * window must not ask the cache.
     */
    void applyEviction(Eviction<K, V> eviction, AttachState s) {
        Entry<K, V> entry = eviction.entry();
        int cachedSpell = entry.uncache(); // from here a releaser puts it again itself
        if (entry.count() != 0) {
            return; // live, or disposed already
        }
        EvictionCause cause = eviction.cause();
        int idleSince = cause == EvictionCause.EXPIRED ? cachedSpell : eviction.spell();
        if (entry.idleSpell() == idleSince) {
            // no disposed object stays cached: a releaser's put may have raced the claim (a put this
            // misses sees the claim itself: IdleTier.put), and after an expiry a put that found the
            // object's own entry expired may have taken that entry over (Caffeine reports the expiry
            // and keeps the entry for the new value, the same object), which the object's mark does
            // not show: the cache is asked (a remove allocates, so only then)
            dispose(
                    entry,
                    s,
                    disposalCause(cause),
                    cause,
                    cause == EvictionCause.EXPIRED ? Uncache.YES : Uncache.IF_MARKED);
        } else if (!idle.putAgain(entry)) {
            dispose(entry, s, disposalCause(cause), cause, Uncache.NO); // evicted, and the cache refused it back
        } else if (entry.count() == 0 && capacity.waiters() > 0 && (revival != null || !servedAtZero(entry, s))) {
            // put back while acquirers wait in line: they may have looked for idle objects while the
            // cache did not show this one (its entry expired); it goes to them as at any other zero.
            // With revive checks it was idle for a whole expiry period: lent only through its check,
            // which a waiter in line does not run, so the line gets its permit instead
            dispose(entry, s, DisposalCause.CAPACITY, null, Uncache.YES);
        }
    }

    private static DisposalCause disposalCause(EvictionCause cause) {
        switch (cause) {
            case EXPIRED:
                return DisposalCause.EXPIRED;
            case COLLECTED:
                return DisposalCause.COLLECTED;
            case CAPACITY:
                return DisposalCause.CAPACITY;
            default:
                return DisposalCause.SIZE;
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
        return dispose(entry, s, cause, null, Uncache.YES);
    }

    /**
     * Disposes now an object whose revive check failed ({@link Revival}), claimed by this thread:
     * out of the cache, then its disposer, so the acquire that checked it finds the key's slot free.
     *
     * @return the object's capacity permit, not given back, and {@code successor} if it took the
     *     object's slot: the checking acquire creates the key's new object with them
     */
    Attempt.Refused disposeChecked(Entry<K, V> entry, Creation<K, V> successor) {
        if (idle != null) {
            idle.remove(entry);
        }
        boolean succeeded = disposals.disposeClaimed(entry, successor);
        return new Attempt.Refused(entry.permit, succeeded ? successor : null);
    }

    /**
     * {@return how many objects {@code pool.clearIdle()} disposed}: every object that is idle (count
     * 0) when the scan reaches it
     */
    int clearIdle(AttachState s) {
        int[] cleared = {0};
        slots.forEachEntry(entry -> {
            if (entry.count() == 0 && disposeIdle(entry, s, DisposalCause.CLEARED)) {
                cleared[0]++;
            }
        });
        return cleared[0];
    }

    // ---------------------------------------------------------------- capacity reclaim

    /**
     * {@return whether an idle object the cache holds was disposed now, its permit freed}. A cache
     * that fails while it is looked through (its views read the ticker, which may throw) is reported,
     * and the slots are scanned instead ({@link #reclaimUncached}).
     */
    boolean reclaimOneIdle() {
        if (idle == null) {
            return false;
        }
        try {
            // the coldest by the policy first, those used since their put (which the policy's order
            // has not seen: the lazy tier) after the rest; each of those is read, so the next
            // reclaim's look sees its use
            return idle.claimOne(
                    candidate -> {
                        Entry<K, V> entry = slots.byIdentity(candidate);
                        if (entry == null || !entry.usedSinceCached()) {
                            return true;
                        }
                        idle.touch(entry);
                        return false;
                    },
                    candidate -> {
                        Entry<K, V> entry = slots.byIdentity(candidate);
                        return entry != null && reclaim(entry); // a live one stays: the cache keeps revived ones
                    });
        } catch (Throwable cacheFailed) {
            pool.report(
                    PoolError.Kind.IDLE_CACHE_FAILED,
                    null,
                    "the idle cache failed while an idle object was looked for to free capacity: "
                            + Keys.describeFailure(cacheFailed),
                    cacheFailed);
            return reclaimUncached();
        }
    }

    /**
     * Reclaims an idle object the cache does not show: one whose entry the cache lost track of (a
     * key whose {@code hashCode} threw inside the cache's maintenance leaves the entry out of its
     * policy, and once past its expiry out of its iteration too), or any idle one without a cache.
     * A scan of the slots, run only by an acquire about to refuse for capacity; an object whose
     * releaser is idling it right now is left to that releaser, which sees the line.
     */
    boolean reclaimUncached() {
        boolean[] reclaimed = {false};
        slots.forEachEntry(entry -> {
            if (!reclaimed[0] && entry.count() == 0 && !entry.isIdling()) {
                reclaimed[0] = reclaim(entry);
            }
        });
        return reclaimed[0];
    }

    /** Disposes an idle object now (its permit is what the caller needs): revived or disposed ones stay. */
    private boolean reclaim(Entry<K, V> entry) {
        return dispose(entry, null, DisposalCause.CAPACITY, EvictionCause.CAPACITY, Uncache.YES);
    }

    // ---------------------------------------------------------------- close

    /**
     * The close loop: empties the idle cache and disposes every object at count 0, in one disposal
     * batch of the closing thread, run dry before it returns (also from a disposer: the close's
     * waiters are released once this returns); live ones are disposed as their last handles close.
     */
    void disposeAllAtClose(AttachState s) {
        if (idle != null) {
            idle.clear(); // EXPLICIT: the loop below disposes what was idle
            idle.cleanUp(); // the cache, empty, cancels its expiry timer, which would keep the pool reachable
        }
        Consumer<Entry<K, V>> atZero = entry -> dispose(entry, s, DisposalCause.CLOSED, null, Uncache.NO);
        disposals.batchRunDry(s, () -> slots.forEachEntry(atZero));
    }
}
