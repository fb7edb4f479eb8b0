package io.refpool.core.internal;

/**
 * The handle of an attached acquire in a pool with thread leases: a borrow of its opening thread's
 * {@link Lease}, given back on close, or (before the thread leases, or with no room) a reference
 * of its own, as a {@link PooledHandle}. Everything but the close is {@code PooledHandle}'s. One
 * class for both, so {@code PoolCore.acquire} has one allocation site for the JIT to remove.
 */
final class LeasedHandle<K, V> extends PooledHandle<K, V> {
    /** The borrowed lease, or {@code null}: the handle holds a reference of its own. */
    private final Lease<K, V> lease;

    private LeasedHandle(Handles<K, V> handles, Entry<K, V> entry, Lease<K, V> lease, AttachState opener) {
        super(handles, entry, opener);
        this.lease = lease;
    }

    /**
     * {@return a handle on {@code reference}}: a borrow of a {@link Lease}, or an {@link Entry} whose
     * reference the caller took. Typed as its superclass, so the verifier does not load this class
     * for its callers: a JVM with no pool with leases never loads it, and the JIT binds {@code
     * PooledHandle.close()} there as if that class were final.
     */
    @SuppressWarnings("unchecked")
    static <K, V> PooledHandle<K, V> on(Handles<K, V> handles, Object reference, AttachState opener) {
        Lease<K, V> lease = reference instanceof Lease ? (Lease<K, V>) reference : null;
        Entry<K, V> entry = lease != null ? lease.entry : (Entry<K, V>) reference;
        return new LeasedHandle<>(handles, entry, lease, opener);
    }

    /**
     * Closes the handle: the borrow goes back to the lease, or the reference to the object; a
     * second close does nothing (untracked). Nothing here passes the handle on, so the JIT can
     * remove it whatever it inlines below.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
        }
        if (lease != null) {
            handles.giveBack(lease, opener);
        } else {
            handles.releaseFromHandle(entry, opener);
        }
    }
}
