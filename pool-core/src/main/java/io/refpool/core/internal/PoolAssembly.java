package io.refpool.core.internal;

import io.refpool.core.EvictionCause;
import io.refpool.sync.CancellationToken;

/**
 * Builds a pool's protocol owners from its {@link PoolSettings}, once, for {@link PoolCore}, which
 * keeps what its entry points call. The owners are built here and nowhere else, so the order of
 * construction and the calls back up it are read in one place.
 *
 * <p>Each owner is given, when it is built, the few owners it calls, and {@link PoolState} for the
 * pool itself; no owner holds the pool. They are built in the order they call each other; the
 * calls back up that order (an attach applies pending releases, a caller's {@code detached()} asks
 * whether the thread holds a section, the cache's evictions are queued, an object the slot table
 * cannot hand out is released or disposed) and a creation's reclaim of capacity go through narrow
 * interfaces ({@link Attacher.PendingReleases}, {@link Attacher.HeldSections},
 * {@link IdleTier.Evictions}, {@link SlotTable.Unusable}, {@link Capacity.Reclaimer}), implemented
 * here on the owners
 * built later.
 */
final class PoolAssembly<K, V> {
    final Attacher<K, V> attacher;
    final Capacity<K, V> capacity;
    final SlotTable<K, V> slots;
    /** The idle cache, or {@code null} without one. */
    private final IdleTier<K, V> idle;

    final EndOfLife<K, V> endOfLife;
    final DeferredReleases<K, V> releases;
    final LeakTracker leaks;
    final LifecycleControl<K, V> control;
    /** Thread leases, or {@code null}: off. */
    final Leases<K, V> leases;
    /** The interrupter and section hooks, or {@code null} if neither is set. */
    final RunControl<K, V> runs;

    final Handles<K, V> handles;
    final Acquirer<K, V> acquirer;
    final Calls<K, V> calls;
    final AsyncCalls<K, V> asyncCalls;
    final PoolReadings readings;
    final Warmer<K, V> warmer;

    /**
     * Builds the owners of the pool {@code pool}.
     *
     * @param pool the pool itself, as its owners see it
     * @param counters the pool's counters
     * @param closingToken the token the first close() cancels
     * @param observer timings and the held-too-long check, or {@code null}: both off
     * @param config the settings the public builder validated
     */
    PoolAssembly(
            PoolState pool,
            PoolCounters counters,
            CancellationToken closingToken,
            Observer observer,
            PoolSettings<K, V> config) {
        // built in the order they call each other (see the class comment)
        ReleaseQueue<Release> pending = new ReleaseQueue<>();
        this.attacher = new Attacher<>(
                pool,
                closingToken,
                pending,
                this::applyIfDirty,
                this::sectionHeldBy,
                config.attachMode(),
                config.defaultWait());
        Revival<K, V> revival = Revival.of(
                pool, counters, config.validator(), config.maxLifetimeNanos(), config.clock(), this::disposeChecked);
        this.capacity = new Capacity<>(
                pool,
                counters,
                closingToken,
                attacher,
                reclaimer(),
                config.idle() != null,
                revival != null,
                config.leaseSweepNanos() > 0,
                config.maxObjects());
        PoolTimings timings = observer == null ? null : observer.timings;
        this.slots =
                new SlotTable<>(pool, counters, capacity, attacher, unusable(), config.factory(), revival, timings);
        Disposals<K, V> disposals = new Disposals<>(pool, counters, slots, config.disposer());
        this.idle = config.idle() == null
                ? null
                : new IdleTier<>(pool, slots, this::evicted, config.idle(), config.ticker());
        this.endOfLife = new EndOfLife<>(pool, counters, slots, idle, revival, capacity, disposals);
        this.releases = new DeferredReleases<>(
                pending,
                pool,
                counters,
                slots,
                endOfLife,
                disposals,
                attacher,
                config.drainExecutor(),
                config.drainDelayNanos(),
                config.drainThreshold());
        this.leaks = new LeakTracker(pool, counters, releases, config.leakDetection(), config.leakSampleInterval());
        this.leases = config.leaseSweepNanos() == 0
                ? null
                : new Leases<>(
                        pool,
                        slots,
                        releases,
                        this::releaseAttached,
                        () -> capacity.waiters() > 0,
                        revival != null,
                        config.leaseSweepNanos());
        this.control = new LifecycleControl<>(pool, attacher, slots, releases, endOfLife, idle, leases);
        this.runs = RunControl.of(pool, control, config);
        this.handles = new Handles<>(
                pool,
                attacher,
                releases,
                endOfLife,
                control,
                runs,
                leaks,
                observer,
                config.strictAccess(),
                config.attachMode(),
                config.defaultWait(),
                leases);
        this.acquirer =
                new Acquirer<>(pool, counters, slots, capacity, attacher, handles, observer, revival != null, leases);
        this.calls = new Calls<>(pool, attacher, acquirer, handles, leases);
        this.asyncCalls = new AsyncCalls<>(pool, closingToken, attacher, acquirer, handles, config.callFunctions());
        this.readings = new PoolReadings(counters, releases.queue(), capacity);
        this.warmer =
                new Warmer<>(pool, closingToken, attacher, slots, handles, config.warmUps(), config.idle() != null);
    }

    // the calls back up the order of construction

    private void releaseAttached(Entry<K, V> entry, AttachState s) {
        handles.releaseAttached(entry, s);
    }

    private void applyIfDirty(AttachState s) {
        releases.applyIfDirty(s);
    }

    private K sectionHeldBy(long threadId) {
        return slots.sectionHeldBy(threadId);
    }

    private boolean evicted(V value, EvictionCause cause) {
        return releases.evicted(value, cause);
    }

    private SlotTable.Unusable<K, V> unusable() {
        return new SlotTable.Unusable<>() {
            @Override
            public void unpublishable(Entry<K, V> entry, AttachState s) {
                endOfLife.unpublishable(entry, s);
            }

            @Override
            public void releaseRetired(Entry<K, V> entry, AttachState s) {
                endOfLife.releaseRetired(entry, s);
            }
        };
    }

    private Attempt.Refused disposeChecked(Entry<K, V> entry, Creation<K, V> successor) {
        return endOfLife.disposeChecked(entry, successor);
    }

    /**
     * How a creation short of capacity frees a permit: idle objects first, then leases that lend
     * nothing now and queued releases; and how the line ends every lease.
     */
    private Capacity.Reclaimer reclaimer() {
        return new Capacity.Reclaimer() {
            @Override
            public boolean reclaimOneIdle() {
                return endOfLife.reclaimOneIdle();
            }

            @Override
            public boolean reclaimUncached() {
                return endOfLife.reclaimUncached();
            }

            @Override
            public void applyPending(AttachState s) {
                if (idle != null) {
                    idle.cleanUp();
                }
                if (leases != null) {
                    leases.revokeForCapacity(s); // attached: each object only a lease kept live reaches zero now
                }
                releases.applyAll(s);
            }

            @Override
            public void endLeases(AttachState s) {
                if (leases != null) {
                    leases.revokeEvery(s);
                }
            }
        };
    }
}
