package io.refpool.core.internal;

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
 *                                       for it: that key's creator, a releaser at count 0 (a revive;
 *                                       also just after its idle put), an acquire whose revive check
 *                                       passed, or the waiter's own look after joining the line
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
 * the creator of the key serves the key's waiters when it publishes the object (and so does an
 * acquire whose revive check passed, since a waiter that looked meanwhile saw no live object), and a waiter that
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
    /**
     * How a creation gets a permit when none is free: by disposing idle objects ({@link EndOfLife}),
     * and by applying queued releases, whose objects hold permits too.
     */
    interface Reclaimer {
        /** {@return whether an idle object the cache holds was disposed, its permit freed} */
        boolean reclaimOneIdle();

        /** {@return whether an idle object the cache does not show was disposed, its permit freed} */
        boolean reclaimUncached();

        /**
         * Evicts what has expired, ends every thread lease that lends nothing now, and applies
         * every queued release; the thread is attached.
         */
        void applyPending(AttachState s);

        /** Ends every thread lease, one in use at its last give-back; the thread is attached. */
        void endLeases(AttachState s);
    }

    /** What a waiter in line asks of its acquirer: the key's object now, and how to finish either way. */
    interface Exits<K, V> {
        /** {@return the key's entry now, or {@code null}} */
        Entry<K, V> current(K key);

        /** Finishes a waiter granted a permit: acquires its key with it. */
        CompletionStage<Entry<K, V>> granted(Guard permit);

        /** Gives back a reference taken for a waiter whose wait ended meanwhile, from any thread. */
        void giveBack(Entry<K, V> entry);

        /**
         * Attached: revives the key's idle object through its check, for a waiter of that key.
         *
         * @return the entry, a reference taken for the waiter, or {@code null} if it has none idle
         */
        Entry<K, V> reviveIdle(K key);
    }

    private final PoolState pool;
    private final PoolCounters counters;
    /** Cancelled when the pool closes: ends every wait in line. */
    private final CancellationToken closing;

    private final Attacher<K, V> attacher;
    private final Reclaimer reclaimer;
    /** Whether the pool has an idle cache, whose objects a waiter reclaims once it is counted. */
    private final boolean cached;
    /** Whether the pool checks revived objects: then a waiter is served a live object only. */
    private final boolean checked;
    /** Whether threads lease objects: a waiter ends every lease once it is counted. */
    private final boolean leased;

    private final int maxObjects;
    /** {@code null} when unbounded. */
    private final AsyncSemaphore permits;
    /** Acquirers in line for a permit: counted before they queue, uncounted when the wait settles. */
    private final AtomicInteger waiting = new AtomicInteger();
    /** The same acquirers by key, in the order they joined; a key leaves the map with its last waiter. */
    private final ConcurrentHashMap<Object, ArrayDeque<LineWaiter<K, V>>> lineByKey = new ConcurrentHashMap<>();

    Capacity(
            PoolState pool,
            PoolCounters counters,
            CancellationToken closing,
            Attacher<K, V> attacher,
            Reclaimer reclaimer,
            boolean cached,
            boolean checked,
            boolean leased,
            int maxObjects) {
        this.checked = checked;
        this.leased = leased;
        this.pool = pool;
        this.counters = counters;
        this.closing = closing;
        this.attacher = attacher;
        this.reclaimer = reclaimer;
        this.cached = cached;
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
            if (reclaimer.reclaimOneIdle()) {
                continue;
            }
            if (drained) {
                if (reclaimer.reclaimUncached()) { // last, before refusing: idle objects the cache does not show
                    continue;
                }
                return null;
            }
            drained = true;
            reclaimer.applyPending(s); // expired entries not yet evicted are invisible to the reclaim
        }
    }

    /** {@return a permit that is free now, or {@code null}}: no eviction, no wait (a warm-up's) */
    Guard tryTakeFree() {
        return permits.tryAcquire(1).orElse(null);
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

    /** Hands {@code waiter} the reference the caller took for it. @return false if its wait ended first */
    boolean serve(LineWaiter<K, V> waiter, Entry<K, V> entry) {
        if (!waiter.serve(entry)) {
            return false;
        }
        waiter.wait.cancel(); // leaves the permit line; the waiter's own continuation completes it
        return true;
    }

    /** {@return whether a waiter whose wait has not ended is in line for {@code key}} (settled heads are dropped) */
    boolean hasWaiting(Object key) {
        boolean[] found = {false};
        try {
            lineByKey.computeIfPresent(key, (k, line) -> {
                for (LineWaiter<K, V> head; (head = line.peek()) != null && !head.isWaiting(); ) {
                    line.poll(); // settled: never served
                }
                found[0] = !line.isEmpty();
                return line.isEmpty() ? null : line;
            });
        } catch (Throwable keyFailed) {
            return false;
        }
        return found[0];
    }

    /** {@return the first waiter in line for {@code key} whose wait has not ended, taken out of the line} */
    LineWaiter<K, V> nextWaiting(Object key) {
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
    CompletionStage<Entry<K, V>> waitInLine(K key, CancellationToken token, Exits<K, V> exits) {
        if (pool.isClosed()) {
            return CompletableFuture.failedFuture(
                    new PoolClosedException(pool.onClosedPool("acquireAsync(" + Keys.describe(key) + ")")));
        }
        pool.hook(PoolHooks.Point.CAPACITY_JOINING);
        CancellationSource linked = CancellationSource.linkedTo(token, closing);
        LineWaiter<K, V> waiter = new LineWaiter<>(key, linked);
        try {
            lineByKey.compute(key, (k, line) -> {
                ArrayDeque<LineWaiter<K, V>> joined = line == null ? new ArrayDeque<>(2) : line;
                joined.add(waiter);
                return joined;
            });
        } catch (Throwable keyFailed) {
            linked.close();
            return CompletableFuture.failedFuture(keyFailed);
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
        CompletionStage<Entry<K, V>> result = queued.handle((permit, failure) -> {
                    waiting.decrementAndGet();
                    leaveLine(waiter);
                    linked.close();
                    if (!waiter.settle()) { // served by sharing the key's object; a permit granted meanwhile goes back
                        giveBack(permit);
                        return CompletableFuture.completedStage(waiter.served()); // its reference taken for it
                    }
                    if (failure != null) {
                        Throwable cause = Waits.unwrapped(failure);
                        if (pool.isClosed() && cause instanceof CancellationException) {
                            throw new CompletionException(new PoolClosedException("pool '" + pool.name()
                                    + "' closed while acquireAsync(" + Keys.describe(key) + ") waited for capacity"));
                        }
                        throw new CompletionException(Waits.named(
                                cause, "capacity for key " + Keys.describe(key) + " in pool '" + pool.name() + "'"));
                    }
                    return exits.granted(permit).whenComplete((handle, attemptFailure) -> {
                        if (attemptFailure != null) {
                            permit.close(); // the attempt ended without an object to hold it
                        }
                    });
                })
                .thenCompose(stage -> stage);
        pool.hook(PoolHooks.Point.CAPACITY_QUEUED);
        Entry<K, V> live;
        try {
            live = exits.current(key); // published before this waiter joined the line
        } catch (Throwable keyFailed) {
            // the key threw: the waiter stays in line, whose wait may have been granted already and
            // made the key's object for it; thrown, that reference would be lost with its permit
            live = null;
        }
        if (live != null && !live.isRetired() && waiter.isWaiting()) {
            if (checked
                    ? live.retainIfLive() > 0
                    : live.retainLive(counters, null) >= 0) { // an idle one: not unchecked
                if (!serve(waiter, live)) {
                    exits.giveBack(live); // the wait ended meanwhile
                }
            }
        }
        if ((cached || leased) && waiters() > 0) {
            // an object may have idled after this acquirer's attempt looked for idle objects and
            // before it was counted, when nobody was in line to dispose it for: reclaim idle ones now;
            // and objects only leases keep live hold permits: end the leases (none is made while
            // anyone is in line), so each such object reaches zero and is disposed for the line
            attacher.attachAsync(CancellationToken.none(), false, attachment -> {
                if (leased) {
                    reclaimer.endLeases(attacher.state());
                }
                if (checked && waiter.isWaiting()) {
                    // its own key's object idled before it was counted, which it could not take
                    // unchecked above: revived for it through its check, never reclaimed for it
                    Entry<K, V> own;
                    try {
                        own = exits.reviveIdle(key);
                    } catch (Throwable keyFailed) { // the key threw: its idle object is reclaimed as any other
                        own = null;
                    }
                    if (own != null && !serve(waiter, own)) {
                        exits.giveBack(own);
                    }
                }
                while (waiters() > 0 && reclaimer.reclaimOneIdle()) {
                    // the permit of each disposed object went to the head waiter
                }
                return null;
            });
        }
        return result;
    }

    /** One {@code acquireAsync} in line for a permit, which a live object of its key may serve instead. */
    static final class LineWaiter<K, V> {
        /** How a waiter's wait ended, or that it has not: one CAS from {@code WAITING} decides. */
        private sealed interface Outcome permits Phase, Served {}

        /** The outcomes that carry nothing. */
        private enum Phase implements Outcome {
            /** In line: its permit wait has not ended, and nobody served it. */
            WAITING,
            /** Its own permit wait ended it: granted, cancelled, or the pool closed. */
            SETTLED
        }

        /** A thread holding a reference to the key's object handed it to this waiter. */
        private record Served(Entry<?, ?> entry) implements Outcome {}

        final Object key;
        /** The permit wait's own source, linked to the caller's token and the pool's close. */
        final CancellationSource wait;

        private final AtomicReference<Outcome> outcome = new AtomicReference<>(Phase.WAITING);

        LineWaiter(Object key, CancellationSource wait) {
            this.key = key;
            this.wait = wait;
        }

        boolean isWaiting() {
            return outcome.get() == Phase.WAITING;
        }

        /** {@return whether {@code entry} (a reference taken for this waiter) now serves it} */
        boolean serve(Entry<K, V> entry) {
            return outcome.get() == Phase.WAITING && outcome.compareAndSet(Phase.WAITING, new Served(entry));
        }

        /** {@return whether the waiter's own wait decided its outcome} (false: it was served) */
        boolean settle() {
            return outcome.compareAndSet(Phase.WAITING, Phase.SETTLED) || outcome.get() == Phase.SETTLED;
        }

        /** {@return the entry that served this waiter}; only after {@link #settle()} returned false */
        @SuppressWarnings("unchecked") // served by an entry of this waiter's pool
        Entry<K, V> served() {
            if (outcome.get() instanceof Served served) {
                return (Entry<K, V>) served.entry();
            }
            throw new IllegalStateException("waiter for key " + Keys.describe(key) + " was not served");
        }
    }
}
