package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.EvictionCause;
import io.refpool.core.Handle;
import io.refpool.core.PoolClosedException;
import io.refpool.sync.AsyncSemaphore;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Capacity: {@code maxObjects} permits, the acquirers waiting in line for one, and the race between
 * a waiter and an object going idle.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   permit                 to           by
 *   free                   held         a creation: tryAcquire, else evicting idle objects, else
 *                                       applying queued releases (evicted objects hold permits too)
 *   free                   held         the head waiter in line (FIFO, handed over on release)
 *   held                   free         the disposal of the object holding it, or a creation that
 *                                       made nothing, or a waiter served by sharing after its grant
 *
 *   waiter                 to           by
 *   WAITING                SETTLED      the waiter itself, when its permit wait ends (granted,
 *                                       cancelled, pool closed)
 *   WAITING                SERVED       a thread holding a reference to the waiter's key's object
 *                                       for it: that key's creator, a releaser at count 0 (a revive),
 *                                       or the waiter's own look after joining the line
 *
 *   read                   ordering     relied on by
 *   waiting                volatile     a releaser at count 0: serve a waiter of its key, idle the
 *                                       object, or dispose it for the line (with the cache's own
 *                                       ordering, see below)
 *   lineByKey              volatile     (the map's) a creator and a releaser at 0 looking for waiters
 * </pre>
 *
 * <p>Each object holds one permit from creation to disposal. An attached acquire never waits for a
 * permit: it evicts idle objects, then applies the releases still queued, then fails fast; an
 * {@code acquireAsync} waits in line, detached.
 *
 * <p><b>No churn.</b> A waiter needs a permit only because its key had no object. As soon as the
 * key has one, the waiter is served by sharing it, and its place in the permit line is given up:
 * the creator of the key serves the key's waiters when it publishes the object, and a waiter that
 * joins the line looks at its key once more after joining (it joins the line before it is counted,
 * and the creator publishes before it looks, so one of the two sees the other). An object reaching
 * count 0 while anyone waits goes first to a waiter for its own key, revived; only when nobody in
 * line wants it is it disposed, its permit going to the head waiter. Permits stay FIFO among the
 * waiters that need one. Serving is one CAS on the waiter, made while the server already holds the
 * reference it hands over; a waiter whose wait ended first is not served, and the reference goes
 * back.
 *
 * <p>An object that idles just as a waiter joins the line is reclaimed by whichever of the two sees
 * the other (Dekker-style on {@code waiting} and the cache's map): the releaser counts the line again
 * after its put, and the waiter, once counted, reclaims idle objects. So nobody waits while an idle
 * object holds a permit.
 */
final class Capacity<K, V> {
    private final PoolCore<K, V> core;
    private final int maxObjects;
    /** {@code null} when unbounded. */
    private final AsyncSemaphore permits;
    /** Acquirers in line for a permit: counted before they queue, uncounted when the wait settles. */
    private final AtomicInteger waiting = new AtomicInteger();
    /** The same acquirers by key, in the order they joined; a key leaves the map with its last waiter. */
    private final ConcurrentHashMap<Object, ArrayDeque<LineWaiter<K, V>>> lineByKey = new ConcurrentHashMap<>();

    Capacity(PoolCore<K, V> core, int maxObjects) {
        this.core = core;
        this.maxObjects = maxObjects;
        this.permits = maxObjects == Integer.MAX_VALUE ? null : new AsyncSemaphore(maxObjects);
    }

    boolean isBounded() {
        return permits != null;
    }

    int maxObjects() {
        return maxObjects;
    }

    /** {@return acquirers waiting in line, a volatile read (ordering: see the table)} */
    int waiters() {
        return waiting.get();
    }

    static void giveBack(Guard permit) {
        if (permit != null) {
            permit.close();
        }
    }

    /** {@return permits free now, or -1 without a bound} (diagnostics: every object holds one) */
    int freePermits() {
        return permits == null ? -1 : permits.availablePermits();
    }

    /** {@return a permit for a new object, or {@code null} if none can be had now} */
    Guard take(AttachState s) {
        boolean drained = false;
        for (; ; ) {
            Optional<Guard> permit = permits.tryAcquire(1);
            if (permit.isPresent()) {
                return permit.get();
            }
            if (reclaimOneIdle()) {
                continue;
            }
            if (drained) {
                if (reclaimUncached()) { // last, before refusing: idle objects the cache does not show
                    continue;
                }
                return null;
            }
            drained = true;
            IdleTier<K, V> idle = core.idle;
            if (idle != null) {
                idle.cleanUp(); // expired entries not yet evicted are invisible to the reclaim
            }
            core.releases.applyAll(s);
        }
    }

    private boolean reclaimOneIdle() {
        IdleTier<K, V> idle = core.idle;
        if (idle == null) {
            return false;
        }
        return idle.claimOne(candidate -> {
            Entry<K, V> entry = core.slots.byIdentity(candidate);
            return entry != null && reclaim(entry); // a live one stays: the cache keeps revived ones
        });
    }

    /**
     * Reclaims an idle object the cache does not show: one whose entry the cache lost track of (a
     * key whose {@code hashCode} threw inside the cache's maintenance leaves the entry out of its
     * policy, and once past its expiry out of its iteration too). A scan of the slots, run only by
     * an acquire about to refuse for capacity; an object whose releaser is idling it right now is
     * left to that releaser, which sees the line.
     */
    private boolean reclaimUncached() {
        boolean[] reclaimed = {false};
        core.slots.forEachEntry(entry -> {
            if (!reclaimed[0] && entry.count() == 0 && !entry.isIdling()) {
                reclaimed[0] = reclaim(entry);
            }
        });
        return reclaimed[0];
    }

    private boolean reclaim(Entry<K, V> entry) {
        if (!entry.tryDispose(DisposalCause.CAPACITY)) { // revived, or disposed already
            return false;
        }
        if (core.idle != null) { // the scan of the slots runs without an idle cache too
            core.idle.remove(entry);
        }
        core.counters.evicted(EvictionCause.CAPACITY);
        core.disposals.disposeClaimed(entry); // now: its permit is what the caller needs
        return true;
    }

    /** The last reference went: idle the object, or dispose it for the line. */
    void reachedZero(Entry<K, V> entry, AttachState s) {
        core.hook(PoolHooks.Point.REACHED_ZERO);
        core.counters.reachedZero();
        IdleTier<K, V> idle = core.idle;
        if (entry.isRetired()) { // invalidated while in use: it goes now, never to the cache
            core.control.disposeIdle(entry, s, DisposalCause.INVALIDATED);
        } else if (core.isClosed()) {
            core.disposals.claim(entry, s, DisposalCause.CLOSED); // close emptied the cache already
        } else if (waiters() > 0) {
            if (!servedAtZero(entry)) { // no waiter for its own key took it: the line needs its permit
                // out of the cache too: an object revived from it keeps its entry (the lazy tier), and
                // a disposed one left there would hold a place of the bound until the cache evicts it
                core.control.disposeIdle(entry, s, DisposalCause.CAPACITY);
            }
        } else if (idle == null || !idle.idle(entry)) { // no cache, or the cache refused it
            core.disposals.claim(entry, s, DisposalCause.RELEASED);
        } else if (entry.count() == 0 && waiters() > 0 && core.disposals.claim(entry, s, DisposalCause.CAPACITY)) {
            // a waiter came meanwhile and may have looked for idle objects before the put: either it
            // sees this object in the cache, or this thread sees it in line
            idle.remove(entry);
        }
    }

    /**
     * A creator published {@code entry}, holding a reference: the key's waiters in line share it
     * instead of waiting for a permit.
     */
    void published(Entry<K, V> entry) {
        if (waiters() == 0) {
            return;
        }
        for (LineWaiter<K, V> waiter; (waiter = nextWaiting(entry.key)) != null; ) {
            if (entry.tryRetain() < 0) {
                return; // disposed meanwhile: the waiters stay in line
            }
            if (!serve(waiter, entry)) {
                entry.release(); // the creator's reference keeps the count above 0
            }
        }
    }

    /**
     * {@return whether waiters for its own key took {@code entry}, which this thread's release moved
     * to count 0} (false: nobody in line wants it, and it is still this thread's to settle). The
     * first waiter revives it, the others share it.
     */
    private boolean servedAtZero(Entry<K, V> entry) {
        boolean mine = true; // whether settling count 0 is still up to this thread
        for (LineWaiter<K, V> waiter; (waiter = nextWaiting(entry.key)) != null; ) {
            int before = entry.tryRetain();
            if (before < 0) {
                return true; // a capacity reclaim disposed it meanwhile: nothing left to settle
            }
            if (before == 0) {
                core.revived(entry);
            }
            if (serve(waiter, entry)) {
                mine = false; // the waiter's reference now: its last release settles the next 0
            } else {
                mine = entry.release() == 0; // the wait ended first; at 0 again it is this thread's again
                if (mine) {
                    core.counters.reachedZero();
                }
            }
        }
        return !mine;
    }

    /** Hands {@code waiter} the reference the caller took for it; {@return false} if its wait ended first. */
    private boolean serve(LineWaiter<K, V> waiter, Entry<K, V> entry) {
        if (!waiter.serve(entry)) {
            return false;
        }
        waiter.wait.cancel(); // leaves the permit line; the waiter's own continuation completes it
        return true;
    }

    /** {@return the first waiter in line for {@code key} whose wait has not ended, taken out of the line} */
    private LineWaiter<K, V> nextWaiting(Object key) {
        Object[] next = {null};
        try {
            lineByKey.computeIfPresent(key, (k, line) -> {
                for (LineWaiter<K, V> waiter; (waiter = line.poll()) != null; ) {
                    if (waiter.isWaiting()) {
                        next[0] = waiter;
                        break;
                    }
                }
                return line.isEmpty() ? null : line;
            });
        } catch (Throwable keyFailed) { // the key's hashCode or equals: nobody is served by it
            return null;
        }
        @SuppressWarnings("unchecked")
        LineWaiter<K, V> waiter = (LineWaiter<K, V>) next[0];
        return waiter;
    }

    private void leaveLine(LineWaiter<K, V> waiter) {
        try {
            lineByKey.computeIfPresent(waiter.key, (k, line) -> {
                line.remove(waiter);
                return line.isEmpty() ? null : line;
            });
        } catch (Throwable keyFailed) {
            // the key threw on joining too (it never joined), or the map keeps a settled waiter that
            // nextWaiting skips
        }
    }

    /**
     * Waits in line for a permit, detached, then acquires {@code key} with it; or shares the key's
     * object if the key gets one meanwhile.
     */
    CompletionStage<Handle<V>> waitInLine(K key, CancellationToken token) {
        if (core.isClosed()) {
            return CompletableFuture.failedStage(
                    new PoolClosedException(core.onClosedPool("acquireAsync(" + Keys.describe(key) + ")")));
        }
        core.hook(PoolHooks.Point.CAPACITY_JOINING);
        CancellationSource linked = CancellationSource.linkedTo(token, core.closingToken());
        LineWaiter<K, V> waiter = new LineWaiter<>(key, linked);
        try {
            lineByKey.compute(key, (k, line) -> {
                ArrayDeque<LineWaiter<K, V>> joined = line == null ? new ArrayDeque<>(2) : line;
                joined.add(waiter);
                return joined;
            });
        } catch (Throwable keyFailed) {
            linked.close();
            return CompletableFuture.failedStage(keyFailed);
        }
        waiting.incrementAndGet();
        CompletionStage<Guard> queued;
        try {
            queued = permits.acquire(1, linked.token());
        } catch (Throwable e) {
            waiting.decrementAndGet();
            waiter.settle();
            leaveLine(waiter);
            linked.close();
            throw e;
        }
        CompletionStage<Handle<V>> result = queued.handle((permit, failure) -> {
                    waiting.decrementAndGet();
                    leaveLine(waiter);
                    linked.close();
                    if (!waiter.settle()) { // served by sharing the key's object; a permit granted meanwhile goes back
                        giveBack(permit);
                        return CompletableFuture.<Handle<V>>completedStage(core.newHandle(waiter.served(), null));
                    }
                    if (failure != null) {
                        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                        if (core.isClosed() && cause instanceof CancellationException) {
                            throw new CompletionException(new PoolClosedException("pool '" + core.name()
                                    + "' closed while acquireAsync(" + Keys.describe(key) + ") waited for capacity"));
                        }
                        throw new CompletionException(Timeouts.named(
                                cause, "capacity for key " + Keys.describe(key) + " in pool '" + core.name() + "'"));
                    }
                    return core.acquireWithPermit(key, token, permit).whenComplete((handle, attemptFailure) -> {
                        if (attemptFailure != null) {
                            permit.close(); // the attempt ended without an object to hold it
                        }
                    });
                })
                .thenCompose(stage -> stage);
        core.hook(PoolHooks.Point.CAPACITY_QUEUED);
        Entry<K, V> live = core.slots.entry(key); // published before this waiter joined the line
        if (live != null && !live.isRetired() && waiter.isWaiting()) {
            int before = live.tryRetain();
            if (before >= 0) {
                if (before == 0) {
                    core.revived(live);
                }
                if (!serve(waiter, live)) {
                    core.release(live, null); // the wait ended meanwhile
                }
            }
        }
        if (core.idle != null && waiters() > 0) {
            // an object may have idled after this acquirer's attempt looked for idle objects and
            // before it was counted, when nobody was in line to dispose it for: reclaim idle ones now
            core.attacher.attachAsync(CancellationToken.none(), false, attachment -> {
                while (waiters() > 0 && reclaimOneIdle()) {
                    // the permit of each disposed object went to the head waiter
                }
                return null;
            });
        }
        return result;
    }

    /** One {@code acquireAsync} in line for a permit, which a live object of its key may serve instead. */
    private static final class LineWaiter<K, V> {
        private static final Object WAITING = new Object();
        private static final Object SETTLED = new Object();

        final Object key;
        /** The permit wait's own source, linked to the caller's token and the pool's close. */
        final CancellationSource wait;

        /** {@code WAITING}, then {@code SETTLED} or the entry that served it: one CAS decides. */
        private final AtomicReference<Object> outcome = new AtomicReference<>(WAITING);

        LineWaiter(Object key, CancellationSource wait) {
            this.key = key;
            this.wait = wait;
        }

        boolean isWaiting() {
            return outcome.get() == WAITING;
        }

        /** {@return whether {@code entry} (a reference taken for this waiter) now serves it} */
        boolean serve(Entry<K, V> entry) {
            return outcome.compareAndSet(WAITING, entry);
        }

        /** {@return whether the waiter's own wait decided its outcome} (false: it was served) */
        boolean settle() {
            return outcome.compareAndSet(WAITING, SETTLED) || outcome.get() == SETTLED;
        }

        /** {@return the entry that served this waiter}; only after {@link #settle()} returned false */
        @SuppressWarnings("unchecked")
        Entry<K, V> served() {
            return (Entry<K, V>) outcome.get();
        }
    }
}
