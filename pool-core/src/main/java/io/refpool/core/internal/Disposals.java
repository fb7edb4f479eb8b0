package io.refpool.core.internal;

import io.refpool.core.Disposer;
import io.refpool.core.PoolError;

/**
 * Disposal: each thread's work list of claimed objects, and the disposer call.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   state of a thread      to            by
 *   not disposing          disposing     the outermost batch: a claim, a drain, close()
 *   disposing              (unchanged)   a nested claim: the entry joins the work list
 *   disposing              not disposing the outermost batch, after running the work list dry
 * </pre>
 *
 * <p>Objects arrive here claimed ({@link EndOfLife}, a CAS from exactly 0), so an object revived in
 * between is never disposed and each object is disposed once. Disposals on a thread run in one loop over its
 * work list ({@link AttachState#disposals}): a disposer that closes handles to other objects extends
 * the loop instead of recursing, so a chain of a million objects does not overflow the stack. The
 * disposer runs attached and outside every lock; whatever it throws is reported and the object
 * counts as disposed, its capacity permit given back.
 */
final class Disposals<K, V> {
    private final PoolState pool;
    private final PoolCounters counters;
    private final SlotTable<K, V> slots;
    private final Disposer<? super K, ? super V> disposer;

    Disposals(PoolState pool, PoolCounters counters, SlotTable<K, V> slots, Disposer<? super K, ? super V> disposer) {
        this.pool = pool;
        this.counters = counters;
        this.slots = slots;
        this.disposer = disposer;
    }

    /**
     * Runs {@code work} as one disposal batch: claims inside it join this thread's work list, which
     * the outermost batch runs dry at its end.
     */
    void batch(AttachState s, Runnable work) {
        if (s.disposing) {
            work.run();
            return;
        }
        s.disposing = true;
        try {
            work.run();
            runWorkList(s);
        } finally {
            s.disposing = false;
        }
    }

    /**
     * {@link #batch}, with the work list run dry before this returns even when nested in this
     * thread's disposal loop: a close called from a disposer must not finish with what it claimed
     * still waiting for that disposer to return. Nested once per close, so it cannot recurse deeply.
     */
    void batchRunDry(AttachState s, Runnable work) {
        if (!s.disposing) {
            batch(s, work);
            return;
        }
        work.run();
        runWorkList(s);
    }

    /** Disposes an object this thread claimed, in this thread's disposal loop (no recursion). */
    void disposeClaimedInLoop(Entry<K, V> entry, AttachState s) {
        s.disposals.add(entry);
        if (!s.disposing) { // the outermost claim runs the loop; a nested one only joins it
            s.disposing = true;
            try {
                runWorkList(s);
            } finally {
                s.disposing = false;
            }
        }
    }

    private void runWorkList(AttachState s) {
        Entry<?, ?> next;
        int ran = 0;
        while ((next = s.disposals.poll()) != null) {
            disposeClaimed(cast(next));
            ran++;
        }
        if (ran > AttachState.DISPOSALS_KEPT) {
            s.shrinkDisposals(); // a cascade's grown work list must not outlive it on a long-lived thread
        }
    }

    @SuppressWarnings("unchecked")
    private Entry<K, V> cast(Entry<?, ?> entry) {
        return (Entry<K, V>) entry;
    }

    /** Runs the disposer of a claimed entry now; attached, outside every lock. */
    void disposeClaimed(Entry<K, V> entry) {
        disposeClaimed(entry, null);
    }

    /**
     * Runs the disposer of a claimed entry now, as {@link #disposeClaimed(Entry)}; with a {@code
     * successor} the object's capacity permit is not given back, and the successor takes the
     * object's slot: the caller creates the key's new object with both.
     *
     * @return whether {@code successor} took the slot
     */
    boolean disposeClaimed(Entry<K, V> entry, Creation<K, V> successor) {
        boolean succeeded = false;
        try {
            disposer.dispose(entry.key, entry.value, entry.disposalCause());
        } catch (Throwable e) { // a checked exception too: it must not stop the disposal loop
            Waits.keepInterrupt(e);
            pool.report(
                    PoolError.Kind.DISPOSER_FAILED,
                    entry.key,
                    "the disposer failed for key " + Keys.describe(entry.key) + ": " + Keys.describeFailure(e),
                    e);
        } finally {
            if (entry.permit != null && successor == null) {
                entry.permit.close(); // first: a successor the retirement wakes finds it free
            }
            succeeded = slots.disposed(entry, successor); // from here the key's next object may be created
            counters.disposed(entry.disposalCause());
        }
        return succeeded;
    }
}
