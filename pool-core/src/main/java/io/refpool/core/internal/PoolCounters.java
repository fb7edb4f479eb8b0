package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.core.EvictionCause;
import io.refpool.core.PoolStats;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

/**
 * Event counters of a pool, striped ({@link LongAdder}) so that counting never adds a contended
 * write; none of them is touched on the attach fast path.
 *
 * <p><b>Idle hits and zeroes</b> come with nearly every request (a revive, then a release back to
 * count 0), so they are not counted with a read-modify-write each: a thread that keeps coming back
 * counts them in its own {@link AttachState} with plain stores, and the pool's counters sum those
 * states. A thread's first {@value #SHARED_BEFORE_OWN} events go to the striped counters, so a
 * short-lived thread (a virtual thread per request) never joins the list; then the thread joins
 * it, once (again with a new state if its thread-locals were cleared, which replaces the old one,
 * its counts folded into the striped counters). The list holds the states of threads that may have ended: when it has grown to twice
 * what the last sweep left, the next joiner sweeps it, folding each ended thread's counts into the
 * striped counters (its end happens-before {@code isAlive()} returning false, so they are final).
 * Sums and sweeps hold the list's lock, so a count is read in its thread's state or in the striped
 * counters, never in both and never in neither: the sums only grow.
 */
final class PoolCounters {
    /** Idle events a thread counts in the striped counters before it counts its own. */
    static final int SHARED_BEFORE_OWN = 16;

    final LongAdder drains = new LongAdder();
    final LongAdder creations = new LongAdder();
    /** Idle hits of threads that count none of their own (yet), and of ended ones. */
    private final LongAdder sharedIdleHits = new LongAdder();
    /** Times an object's count reached 0, as {@link #sharedIdleHits}: with idle hits and disposals, how many objects are idle now. */
    private final LongAdder sharedZeroes = new LongAdder();

    /**
     * The states of threads that count their own idle events, one per thread; guarded by itself. A
     * thread whose thread-locals were cleared (a common-pool worker between tasks) joins again with
     * a new state, which replaces the old one, its counts folded into the striped counters.
     */
    private final HashMap<Thread, AttachState> counting = new HashMap<>();

    /** How many states the last sweep left in {@link #counting}: the next sweeps at twice as many. */
    private int keptBySweep = SHARED_BEFORE_OWN;

    final LongAdder leaks = new LongAdder();
    /** Handles and calls reported open past the held-too-long threshold. */
    final LongAdder heldTooLong = new LongAdder();
    /** Waits the pool ended with a {@code WaitTimeoutException}. */
    final LongAdder timeouts = new LongAdder();

    private final EnumMap<EvictionCause, LongAdder> evictions = new EnumMap<>(EvictionCause.class);
    private final EnumMap<DisposalCause, LongAdder> disposals = new EnumMap<>(DisposalCause.class);

    PoolCounters() {
        for (EvictionCause cause : EvictionCause.values()) {
            evictions.put(cause, new LongAdder());
        }
        for (DisposalCause cause : DisposalCause.values()) {
            disposals.put(cause, new LongAdder());
        }
    }

    void disposed(DisposalCause cause) {
        disposals.get(cause).increment();
    }

    /**
     * An acquire revived an idle object (count 0 to 1).
     *
     * @param s the calling thread's state, or {@code null} if the caller has none at hand
     */
    void idleHit(AttachState s) {
        if (s != null && s.countsOwn) {
            s.countIdleHit();
        } else {
            sharedIdleHits.increment();
            countedShared(s);
        }
    }

    /**
     * An object's count reached 0 (a release, not a disposal).
     *
     * @param s the calling thread's state, or {@code null}
     */
    void reachedZero(AttachState s) {
        if (s != null && s.countsOwn) {
            s.countZero();
        } else {
            sharedZeroes.increment();
            countedShared(s);
        }
    }

    /** One event counted shared for {@code s}'s thread: at the threshold the thread counts its own. */
    private void countedShared(AttachState s) {
        if (s != null && ++s.sharedCounted == SHARED_BEFORE_OWN) {
            synchronized (counting) {
                if (counting.size() >= 2 * keptBySweep) {
                    sweep();
                }
                AttachState replaced = counting.put(s.thread, s);
                if (replaced != null && replaced != s) { // this thread's earlier state: it writes it no more
                    sharedIdleHits.add(replaced.ownIdleHits());
                    sharedZeroes.add(replaced.ownZeroes());
                }
            }
            s.countsOwn = true; // after it joined: what it counts from now on is summed
        }
    }

    /** Folds the counts of ended threads into the striped counters and drops their states. */
    private void sweep() {
        counting.values().removeIf(s -> {
            if (s.thread.isAlive()) {
                return false;
            }
            sharedIdleHits.add(s.ownIdleHits());
            sharedZeroes.add(s.ownZeroes());
            return true;
        });
        keptBySweep = Math.max(SHARED_BEFORE_OWN, counting.size());
    }

    /** {@return how many threads' states the counters sum now (tests)} */
    int countingThreads() {
        synchronized (counting) {
            return counting.size();
        }
    }

    /** {@return idle hits so far} */
    long idleHits() {
        return sum(sharedIdleHits, AttachState::ownIdleHits);
    }

    /** {@return zeroes so far} */
    long zeroes() {
        return sum(sharedZeroes, AttachState::ownZeroes);
    }

    /** The shared count plus every counting thread's own, read under the list's lock. */
    private long sum(LongAdder shared, ToLongFunction<AttachState> own) {
        synchronized (counting) {
            long sum = shared.sum();
            for (AttachState s : counting.values()) {
                sum += own.applyAsLong(s);
            }
            return sum;
        }
    }

    /** {@return objects disposed so far, all causes} */
    long disposals() {
        long sum = 0;
        for (LongAdder adder : disposals.values()) {
            sum += adder.sum();
        }
        return sum;
    }

    /** {@return objects disposed for {@code cause} so far} */
    long disposals(DisposalCause cause) {
        return disposals.get(cause).sum();
    }

    /**
     * {@return objects that exist now (live or idle): created and not disposed}, from the counters
     * alone; exact when nothing moves, within the transitions in flight otherwise
     */
    long existing() {
        return Math.max(0, creations.sum() - disposals());
    }

    /**
     * {@return objects at count 0 and not disposed now}, from the counters alone: every object
     * reaches 0 once per idle spell and leaves it by a revive (an idle hit) or its disposal (always
     * from 0). Within the transitions in flight while the pool moves; never below 0 or above
     * {@link #existing()}.
     */
    long idleNow() {
        long disposed = disposals();
        long idle;
        synchronized (counting) { // both sums over one list
            idle = zeroes() - idleHits() - disposed;
        }
        return Math.max(0, Math.min(idle, creations.sum() - disposed));
    }

    void evicted(EvictionCause cause) {
        evictions.get(cause).increment();
    }

    /** {@return the pool's stats: these counters, and the live and idle objects of {@code slots} counted now} */
    PoolStats snapshot(SlotTable<?, ?> slots, long pendingReleases, long capacityWaiters) {
        long[] liveAndIdle = {0, 0};
        slots.forEachObject(
                entry -> { // an invalidated object still held is live: it holds its permit
                    int count = entry.count();
                    if (count > 0) {
                        liveAndIdle[0]++;
                    } else if (count == 0 || Entry.isChecking(count)) { // under its revive check: idle till the verdict
                        liveAndIdle[1]++;
                    }
                });
        // the causes read once, the total their sum, so the two agree; read before the creations,
        // so an object made and disposed meanwhile cannot show more disposals than creations
        Map<DisposalCause, Long> byCause = disposalsByCause();
        long disposed = 0;
        for (long count : byCause.values()) {
            disposed += count;
        }
        long created = creations.sum();
        return new PoolStats(
                liveAndIdle[0],
                liveAndIdle[1],
                pendingReleases,
                drains.sum(),
                created,
                disposed,
                evictions(),
                idleHits(),
                capacityWaiters,
                leaks.sum(),
                byCause,
                timeouts.sum(),
                heldTooLong.sum());
    }

    Map<DisposalCause, Long> disposalsByCause() {
        EnumMap<DisposalCause, Long> snapshot = new EnumMap<>(DisposalCause.class);
        disposals.forEach((cause, adder) -> snapshot.put(cause, adder.sum()));
        return snapshot;
    }

    Map<EvictionCause, Long> evictions() {
        EnumMap<EvictionCause, Long> snapshot = new EnumMap<>(EvictionCause.class);
        evictions.forEach((cause, adder) -> snapshot.put(cause, adder.sum()));
        return snapshot;
    }
}
