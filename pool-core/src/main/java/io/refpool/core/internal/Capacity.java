package io.refpool.core.internal;

import io.refpool.core.EvictionCause;
import io.refpool.core.Handle;
import io.refpool.core.PoolClosedException;
import io.refpool.sync.AsyncSemaphore;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

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
 *                                       made nothing
 *
 *   read                   ordering     relied on by
 *   waiting                volatile     a releaser at count 0: idle the object, or dispose it for
 *                                       the line (with the cache's own ordering, see below)
 * </pre>
 *
 * <p>Each object holds one permit from creation to disposal. An attached acquire never waits for a
 * permit: it evicts idle objects, then applies the releases still queued, then fails fast; an
 * {@code acquireAsync} waits in line, detached. While anyone waits, an object reaching count 0 is
 * disposed so its permit goes to the head waiter. An object that idles just as a waiter joins the
 * line is reclaimed by whichever of the two sees the other (Dekker-style on {@code waiting} and the
 * cache's map): the releaser counts the line again after its put, and the waiter, once counted,
 * reclaims idle objects. So nobody waits while an idle object holds a permit.
 */
final class Capacity<K, V> {
    private final PoolCore<K, V> core;
    private final int maxObjects;
    /** {@code null} when unbounded. */
    private final AsyncSemaphore permits;
    /** Acquirers in line for a permit: counted before they queue, uncounted when the wait settles. */
    private final AtomicInteger waiting = new AtomicInteger();

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
        if (!entry.tryDispose()) { // revived, or disposed already
            return false;
        }
        core.idle.remove(entry);
        core.counters.evicted(EvictionCause.CAPACITY);
        core.disposals.disposeClaimed(entry); // now: its permit is what the caller needs
        return true;
    }

    /** The last reference went: idle the object, or dispose it for the line. */
    void reachedZero(Entry<K, V> entry, AttachState s) {
        IdleTier<K, V> idle = core.idle;
        if (entry.isRetired()) { // invalidated while in use: it goes now, never to the cache
            core.disposeIdle(entry, s);
        } else if (idle == null
                || core.isClosed()
                || waiters() > 0) { // no cache, closing, or the line needs its permit
            core.disposals.claim(entry, s);
        } else if (!idle.idle(entry)) {
            core.disposals.claim(entry, s);
        } else if (entry.count() == 0 && waiters() > 0 && core.disposals.claim(entry, s)) {
            // a waiter came meanwhile and may have looked for idle objects before the put: either it
            // sees this object in the cache, or this thread sees it in line
            idle.remove(entry);
        }
    }

    /** Waits in line for a permit, detached, then acquires {@code key} with it. */
    CompletionStage<Handle<V>> waitInLine(K key, CancellationToken token) {
        if (core.isClosed()) {
            return CompletableFuture.failedStage(
                    new PoolClosedException(core.onClosedPool("acquireAsync(" + Keys.describe(key) + ")")));
        }
        CancellationSource linked = CancellationSource.linkedTo(token, core.closingToken());
        waiting.incrementAndGet();
        CompletionStage<Guard> queued;
        try {
            queued = permits.acquire(1, linked.token());
        } catch (Throwable e) {
            waiting.decrementAndGet();
            linked.close();
            throw e;
        }
        CompletionStage<Handle<V>> result = queued.handle((permit, failure) -> {
                    waiting.decrementAndGet();
                    linked.close();
                    if (failure != null) {
                        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                        if (core.isClosed() && cause instanceof CancellationException) {
                            throw new CompletionException(new PoolClosedException("the pool closed while acquireAsync("
                                    + Keys.describe(key) + ") waited for capacity"));
                        }
                        throw new CompletionException(cause);
                    }
                    return permit;
                })
                .thenCompose(
                        permit -> core.acquireWithPermit(key, token, permit).whenComplete((handle, failure) -> {
                            if (failure != null) {
                                permit.close(); // the attempt ended without an object to hold it
                            }
                        }));
        core.hook(PoolHooks.Point.CAPACITY_QUEUED);
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
}
