package io.refpool.core.internal;

import java.util.Arrays;

/** The leases on one object: added when made, removed when ended, read in full to revoke. */
final class LeaseHolders {
    private Lease<?, ?>[] all = new Lease<?, ?>[2];
    private int size;
    /**
     * Set by a sweep of a checked pool that ends the object's leases, cleared when the object
     * next passes a revive check ({@link Entry#checkedAgain}): meanwhile no lease is made on it,
     * so a thread that stays attached and acquires the object again before the sweep's queued
     * release is applied cannot keep it from zero, and from its checks, with a new lease.
     */
    private boolean checkDue;

    /** {@return whether {@code lease} was listed}: not if the object is retired, due a check, or the pool closed */
    synchronized boolean add(Lease<?, ?> lease, Entry<?, ?> entry, PoolState pool) {
        if (checkDue || entry.isRetired() || pool.isClosed()) {
            return false;
        }
        if (size == all.length) {
            all = Arrays.copyOf(all, size * 2);
        }
        all[size++] = lease;
        return true;
    }

    /**
     * {@return the leases listed now}, for a sweep; {@code checked} (a pool with revive checks):
     * a list that is not empty also marks the object due its check, in the same hold of the lock,
     * so a lease made after the listing is refused rather than left out of the sweep
     */
    synchronized Lease<?, ?>[] sweepList(boolean checked) {
        if (checked && size > 0) {
            checkDue = true;
        }
        return Arrays.copyOf(all, size);
    }

    synchronized void checked() {
        checkDue = false;
    }

    synchronized void remove(Lease<?, ?> lease) {
        for (int i = 0; i < size; i++) {
            if (all[i] == lease) {
                all[i] = all[--size];
                all[size] = null;
                return;
            }
        }
    }

    synchronized Lease<?, ?>[] snapshot() {
        return Arrays.copyOf(all, size);
    }

    /** {@return a lease of {@code thread}'s listed here}, or {@code null} */
    synchronized Lease<?, ?> ownedBy(Thread thread) {
        for (int i = 0; i < size; i++) {
            if (all[i].owner == thread) {
                return all[i];
            }
        }
        return null;
    }
}
