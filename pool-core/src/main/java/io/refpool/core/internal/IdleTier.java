package io.refpool.core.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.EvictionCause;
import io.refpool.core.PoolError;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The idle tier: objects at count 0 kept in a Caffeine cache, whose policy (size, weight, expiry)
 * decides which to evict. The only class that touches Caffeine.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   transition            by                                   cache sees
 *   count 0, idled        the releaser: a new idle spell if     put, only if not cached already
 *                         the last was recorded; nothing else
 *   revived (0 to 1)      the reviver's getAndAdd               nothing: the entry stays cached
 *   evicted               Caffeine's policy                     listener: an Eviction is queued
 *   eviction drained      the attached drain: idle since the    nothing (disposed), or a put again
 *                         cache decided, dispose; used since,   (its policy sees the object anew)
 *                         put it again; live, let it go
 *   claimed elsewhere     capacity reclaim, close, a drain      remove (a stale value goes)
 * </pre>
 *
 * <p>Entries are removed lazily: a revive and the next idle touch only the entry, so the request
 * path of a plugin host (revive, use, idle) never writes the cache. The cache therefore holds idle
 * objects and objects revived since it took them; its size bound counts both, so at most that many
 * objects are idle in it, and fewer while revived ones hold places. A put that leaves the cache over
 * its bound runs the cache's maintenance itself (a put only tries to, and the cache would otherwise
 * wait for more activity, which revives and idles do not make), or hands it to the thread running
 * it ({@link CacheMaintenance}): once every put has returned, the cache is within its bound, and
 * the evictions are queued for the next attach or the drainer. Under a weight bound every put asks,
 * as the cache's weighted size counts only the writes its maintenance has taken in.
 * Expiry runs from the cache's last put of the object: an object used since is put again when its
 * entry expires, so an idle object is disposed between one and two expiry periods after it last
 * went idle.
 *
 * <p>The cache never decides a disposal by itself: the listener only queues an {@link Eviction}
 * with the spell it saw, and the attached drain decides, a disposal being a claim from exactly 0
 * (see {@link Entry}). Caffeine calls the listener before it removes the entry, so a drain can apply
 * an eviction while the cache still shows the entry; a put that then finds the key taken waits for
 * the removal under the key's lock before it believes it (see {@code insert}). A put that finds
 * the key's entry expired takes that entry over, and Caffeine reports the expiry of the value it
 * held, which can be this same object: the drain of that report then marks the object uncached
 * while the entry holds it. So a disposal after an expiry, and every disposal on demand, takes the
 * object out by asking the cache ({@code remove(key, object)}), not by its mark (a size eviction
 * never leaves the entry, and the remove allocates), and an idle of such an object puts it again,
 * which finds it present and keeps it.
 *
 * <p>The listener finds the entry by the object's identity, never through the key, whose
 * {@code hashCode} may throw; every cache call that can run user code (a weigher, the key's
 * {@code hashCode}/{@code equals}) is guarded, and a failure disposes the object instead of idling
 * it.
 */
final class IdleTier<K, V> {
    /** Where the cache's evictions go: queued for the attached drain, which decides. */
    @FunctionalInterface
    interface Evictions<V> {
        /** {@return whether {@code value} is a pooled object, whose eviction is now queued} */
        boolean evicted(V value, EvictionCause cause);
    }

    private final PoolState pool;
    private final SlotTable<K, V> slots;
    private final Evictions<V> evictions;
    private final Cache<K, V> cache;
    /** The cache's size or weight bound, or {@code null} if it has none. */
    private final Policy.Eviction<K, V> bound;
    /** Runs the maintenance a put over the bound asks for, one thread at a time. */
    private final CacheMaintenance maintenance = new CacheMaintenance(this::cleanUp);

    IdleTier(
            PoolState pool,
            SlotTable<K, V> slots,
            Evictions<V> evictions,
            Consumer<? super Caffeine<Object, Object>> configurer,
            Ticker ticker) {
        this.pool = pool;
        this.slots = slots;
        this.evictions = evictions;
        Caffeine<Object, Object> builder = Caffeine.newBuilder();
        configurer.accept(builder);
        String configured = builder.toString(); // the builder's only account of reference strength
        if (configured.contains("keyStrength=") || configured.contains("valueStrength=")) {
            throw new IllegalArgumentException("idle(...) must not set weak or soft references (" + configured
                    + "): the pool holds its keys and objects strongly until it disposes them, so such a"
                    + " reference would never let an idle object go, and weak keys would compare keys by identity");
        }
        try {
            // maintenance on the writing thread: the eviction listener only queues, and a pool
            // thread woken per write costs an unpark on every miss; a put's maintenance task as the
            // runner of CacheMaintenance, so another put over the bound hands its request to it
            builder.executor(maintenance::execute);
        } catch (IllegalStateException alreadySet) {
            // the configurer chose its own executor
        }
        if (ticker != null) {
            try {
                builder.ticker(ticker); // the pool's clock, so idle expiry and lifetime agree
            } catch (IllegalStateException alreadySet) {
                // the configurer chose the cache's own ticker
            }
        }
        try {
            builder.scheduler(CacheMaintenance.SCHEDULER); // off refpool's timer thread before it runs
        } catch (IllegalStateException alreadySet) {
            // the configurer chose its own scheduler
        }
        Caffeine<K, V> listening;
        try {
            listening = builder.<K, V>evictionListener(this::onEvicted);
        } catch (IllegalStateException alreadySet) {
            throw new IllegalArgumentException(
                    "idle(...) must not set an eviction listener: the pool disposes evicted objects itself",
                    alreadySet);
        }
        this.cache = listening.build(); // Caffeine's own checks of the configuration speak for themselves
        this.bound = cache.policy().eviction().orElse(null);
    }

    /**
     * Idles an object that reached count 0. One the cache holds already (it stays cached while
     * revived) writes nothing but, if its spell was recorded since it began, a new spell; otherwise
     * a put.
     *
     * @return whether the object is idle in the cache; if not, the failure was reported and the
     *     caller disposes it
     */
    boolean idle(Entry<K, V> entry) {
        if (entry.isCached()) { // the hot key's zero: no flag, no cache write, at most a new spell
            entry.beginIdleSpell();
            return true;
        }
        entry.idling(true);
        try {
            pool.hook(PoolHooks.Point.BEFORE_IDLE_PUT);
            int spell = entry.beginIdleSpell();
            if (!entry.isCached() && !put(entry, spell)) {
                return false;
            }
            pool.hook(PoolHooks.Point.AFTER_IDLE_PUT);
            return true;
        } finally {
            entry.idling(false);
        }
    }

    /** Puts an idle object back after its eviction because it was used since the cache took it. */
    boolean putAgain(Entry<K, V> entry) {
        return put(entry, entry.idleSpell());
    }

    private boolean put(Entry<K, V> entry, int spell) {
        pool.hook(PoolHooks.Point.BEFORE_CACHE_PUT);
        entry.recordSpell(); // so the next zero starts a new spell: an expiry then sees the object was used
        entry.cachedIn(spell); // before the put: a releaser from now on finds it cached
        try {
            insert(entry);
        } catch (Throwable cacheFailed) { // the weigher, or the key's hashCode
            entry.uncache();
            pool.report(
                    PoolError.Kind.IDLE_CACHE_FAILED,
                    entry.key,
                    "the idle cache could not take the object of key " + Keys.describe(entry.key)
                            + "; it is disposed instead",
                    cacheFailed);
            remove(entry);
            return false;
        }
        pool.hook(PoolHooks.Point.AFTER_CACHE_INSERT);
        int count = entry.count();
        if (count < 0 && !Entry.isChecking(count)) {
            // reclaimed for capacity while its put was under way: no disposed object stays cached. An
            // acquire's revive check is not that: it revives the object, or fails and takes it out itself
            remove(entry);
        } else if (bound != null && (bound.isWeighted() || cache.estimatedSize() > bound.getMaximum())) {
            // Caffeine evicts in its maintenance, which a put runs only if no other thread is in it,
            // and then waits for more cache activity: the lazy tier makes none while objects are
            // revived and idled, so the put that leaves the cache over its bound runs it now, or
            // hands it to the thread running it. A weighted size counts only the writes the
            // maintenance has taken in, so a put whose own maintenance did not run cannot tell
            // whether it left the cache over its bound: with a weight bound, every put asks.
            maintenance.request();
        }
        return true;
    }

    /**
     * Puts the object in the cache without ever displacing the key's current object. A key may have
     * two objects for a moment (one disposed, or retired by invalidate, whose put is still in flight,
     * and the one that replaced it), and a plain put of the old one would replace the new one in the
     * cache with no eviction: the new one would stay marked cached and never be put, idle outside the
     * bound for good. So the old one goes in only where the key is free or holds a stale value.
     *
     * <p>A {@code putIfAbsent} that finds the key taken is not the answer: Caffeine calls the
     * eviction listener before it removes the entry, and {@code putIfAbsent} reads the key without
     * its lock, so it reports as present this very object in an entry that is going. A drain may have
     * applied that eviction already (the object was live, so the cache let go of it) and this put is
     * the one that was to idle it again: it would return, the entry would go, and the object would
     * stay marked cached outside the cache. {@code compute} takes the key's lock, so it waits for
     * that removal and then sees the key as it is.
     */
    private void insert(Entry<K, V> entry) {
        int[] put = CacheMaintenance.beginPut(); // the cache's maintenance this write runs may be the runner
        try {
            insertNow(entry);
        } finally {
            CacheMaintenance.endPut(put);
        }
    }

    private void insertNow(Entry<K, V> entry) {
        Map<K, V> map = cache.asMap();
        if (map.putIfAbsent(entry.key, entry.value) == null) {
            return; // the key was free: the common case, without the key's lock
        }
        map.compute(
                entry.key,
                (key, present) -> present == null || present == entry.value || isStale(present)
                        ? entry.value
                        : present); // the key's current object holds the place: this one is on its way out
    }

    /** {@return whether a cached value is not the current object of a live entry} (disposed or retired) */
    private boolean isStale(V value) {
        Entry<K, V> other = slots.byIdentity(value);
        int count = other == null ? 0 : other.count();
        return other == null || (count < 0 && !Entry.isChecking(count)) || other.isRetired();
    }

    /** Takes {@code entry}'s object out of the cache if it is there (EXPLICIT: not disposed by it). */
    void remove(Entry<K, V> entry) {
        entry.uncache();
        try {
            cache.asMap().remove(entry.key, entry.value);
        } catch (Throwable cacheFailed) { // the key's hashCode or equals: a stale value stays until evicted
            reportRemoveFailed(entry, cacheFailed);
        }
    }

    private void reportRemoveFailed(Entry<K, V> entry, Throwable cacheFailed) {
        pool.report(
                PoolError.Kind.IDLE_CACHE_FAILED,
                entry.key,
                "the idle cache failed to let go of the object of key " + Keys.describe(entry.key),
                cacheFailed);
    }

    /** How many times {@link #claimOne} looks at the policy's order for a preferred object. */
    private static final int LOOKS = 2;

    /**
     * Offers cached objects to {@code claim} until it takes one: the coldest few as far as the
     * policy tells, those {@code preferred} first; if it refused some, the coldest few again (its
     * refusal may have moved them: see {@link #touch}); then the last few looked at, then any.
     *
     * @param preferred which of the coldest go first; asked once for each of them per look
     * @return whether {@code claim} took one
     */
    boolean claimOne(Predicate<V> preferred, Predicate<V> claim) {
        Map<K, V> coldest = coldest();
        for (int look = 1; coldest != cache.asMap(); look++) {
            boolean refused = false;
            for (V candidate : coldest.values()) {
                if (!preferred.test(candidate)) {
                    refused = true;
                } else if (claim.test(candidate)) {
                    return true;
                }
            }
            if (!refused || look == LOOKS) {
                break;
            }
            coldest = coldest(); // the snapshot runs the cache's maintenance, which takes in the reads
        }
        // then anything idle: the policy's order may not have seen the latest put yet
        return claimOneOf(coldest, claim) || (coldest != cache.asMap() && claimOneOf(cache.asMap(), claim));
    }

    /**
     * Reads a cached object's key, so the policy's order sees it as used now: a revive does not touch
     * the cache (the lazy tier), so the order knows only the put. A read, not a put: it inserts
     * nothing, runs no weigher, and leaves the object's cached spell to the puts and evictions.
     */
    void touch(Entry<K, V> entry) {
        cache.getIfPresent(entry.key);
    }

    private boolean claimOneOf(Map<K, V> candidates, Predicate<V> claim) {
        for (V candidate : candidates.values()) {
            if (claim.test(candidate)) {
                return true;
            }
        }
        return false;
    }

    private Map<K, V> coldest() {
        Policy<K, V> policy = cache.policy();
        Optional<Policy.Eviction<K, V>> bySize = policy.eviction();
        if (bySize.isPresent()) {
            return bySize.get().coldest(4);
        }
        Optional<Policy.FixedExpiration<K, V>> byAccess = policy.expireAfterAccess();
        if (byAccess.isPresent()) {
            return byAccess.get().oldest(4);
        }
        return cache.asMap();
    }

    /** {@return the number of entries the cache holds (an estimate while writes are in flight)} */
    long size() {
        return cache.estimatedSize();
    }

    /** Runs the cache's maintenance now, so expired entries are evicted (and their evictions queued). */
    void cleanUp() {
        try {
            cache.cleanUp();
        } catch (Throwable cacheFailed) {
            pool.report(PoolError.Kind.IDLE_CACHE_FAILED, null, "the idle cache's maintenance failed", cacheFailed);
        }
    }

    /** Empties the cache (EXPLICIT: the caller disposes what was idle). */
    void clear() {
        try {
            cache.invalidateAll();
        } catch (Throwable cacheFailed) { // a key's hashCode: the caller disposes them all the same
            pool.report(PoolError.Kind.IDLE_CACHE_FAILED, null, "the idle cache failed to empty", cacheFailed);
        }
    }

    private void onEvicted(K key, V value, RemovalCause cause) {
        if (value != null && evictions.evicted(value, evictionCause(cause))) {
            pool.hook(PoolHooks.Point.EVICTION_QUEUED);
        }
    }

    private static EvictionCause evictionCause(RemovalCause cause) {
        switch (cause) {
            case EXPIRED:
                return EvictionCause.EXPIRED;
            case COLLECTED:
                return EvictionCause.COLLECTED;
            default:
                return EvictionCause.SIZE;
        }
    }
}
