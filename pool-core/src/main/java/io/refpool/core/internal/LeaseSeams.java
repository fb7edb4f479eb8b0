package io.refpool.core.internal;

/**
 * Test seams of a pool's thread leases ({@link Leases}), from {@link PoolCore#leasesForTests()}:
 * usable only where the build turns the seams on ({@link TestSeams}).
 */
public final class LeaseSeams<K, V> {
    private final Leases<K, V> leases;
    private final SlotTable<K, V> slots;
    private final Attacher<K, V> attacher;

    LeaseSeams(Leases<K, V> leases, SlotTable<K, V> slots, Attacher<K, V> attacher) {
        this.leases = leases;
        this.slots = slots;
        this.attacher = attacher;
    }

    /** Makes threads lease from their first acquire, not their 33rd; before any thread attaches. */
    public void leaseAtOnce() {
        leases.leaseAtOnceForTests();
    }

    /**
     * Runs one sweep now, on the calling thread, which gives back what it ends as it would a
     * handle's (the sweeper's thread only queues it).
     */
    public void sweep() {
        leases.sweep(attacher.state());
    }

    /** Capacity running short no longer pauses leasing; before any thread attaches. */
    public void neverPause() {
        leases.neverPauseForTests();
    }

    /** Runs one sweep now as the sweeper's thread does: what it ends is only queued. */
    public void sweepAsSweeper() {
        leases.sweep(null);
    }

    /** Ends a pause of leasing that capacity ran short of leases set, at once. */
    public void resumeLeasing() {
        leases.resumeForTests();
    }

    /** {@return the leases not ended on the current object of {@code key}}, 0 if it has none */
    public int leasesOn(K key) {
        Entry<K, V> entry = slots.entry(key);
        return entry == null ? 0 : Leases.leasesOn(entry);
    }

    /**
     * Drops the calling thread's attach state, as a pool thread that clears its thread-locals
     * between tasks loses it; the thread must not be attached.
     */
    public void forgetThread() {
        attacher.forgetThread();
    }
}
