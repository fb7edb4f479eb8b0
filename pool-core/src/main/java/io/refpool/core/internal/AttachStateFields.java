package io.refpool.core.internal;

import io.refpool.sync.Guard;
import java.util.ArrayDeque;

/**
 * The fields of an {@link AttachState}, which its thread writes on every attach and detach, between
 * {@link LinePad}'s 64 bytes and those {@link AttachState} adds after them: however a collection
 * places one thread's state next to another's, or next to the pool's attacher, that every thread
 * reads, the writes of one never cost the other a cache miss.
 */
abstract class AttachStateFields extends LinePad {
    final Thread thread;

    /** The pool's attacher while attached ({@code depth > 0}), otherwise {@code null}. */
    Attacher<?, ?> attacher;

    int depth;
    /** Whether the outermost attachment holds the gate exclusively. */
    boolean exclusive;
    /** The guard of an outermost attachment that had to wait; {@code null} if it entered at once. */
    Guard guard;

    /** Slots below this belong to attachments suspended by {@code detached()} sections. */
    int base;

    /**
     * How many of the suspensions under way the pool made itself (a {@code GLOBAL} factory, a wait
     * for a section), not a caller's {@code detached()}: a {@code detached()} there runs as it is.
     */
    int poolSuspensions;

    /**
     * Whether the thread runs an async step ({@link Attacher#runAttached}): work granted the gate on
     * whichever thread released it, or a {@code callAsync} function on the call executor. Its
     * creations keep the gate, since taking it back could wait for work queued on that same thread.
     */
    boolean asyncStep;

    /** Per slot, the first of its two scope objects, which holds whose turn it is ({@link AttachState#open}). */
    AttachScope[] scopes = new AttachScope[4];

    /** {@code scopes[1]} once made: the slot of a nested attach at depth 1, read without the array. */
    AttachScope secondSlot;

    /** Objects to dispose, run in a loop by the outermost disposal on this thread (no recursion). */
    ArrayDeque<Entry<?, ?>> disposals = new ArrayDeque<>();

    boolean disposing;

    /**
     * This thread's idle hits and zeroes once the pool's counters took it in ({@link
     * PoolCounters#idleHit}); written by this thread only, read by any through {@link
     * AttachState#ownIdleHits()} and {@link AttachState#ownZeroes()}.
     */
    long idleHits, zeroes;

    /** This thread's leases on the pool's objects ({@link Leases}), or {@code null} until its first. */
    Lease<?, ?>[] leases;

    /** Ordinary acquires this thread made before its first lease; {@link Leases#adopt} counts them. */
    int unleasedAcquires;

    /** Where the next search for a lease to give up starts, in a full stretch of {@link #leases}. */
    int leaseVictim;

    /** Whether the pool's counters read {@link #idleHits} and {@link #zeroes}: set once, by this thread. */
    boolean countsOwn;

    /** Idle events this thread counted in the pool's shared counters, before {@link #countsOwn}. */
    int sharedCounted;

    AttachStateFields(Thread thread) {
        this.thread = thread;
    }
}
