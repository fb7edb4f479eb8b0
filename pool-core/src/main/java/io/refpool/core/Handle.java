package io.refpool.core;

/**
 * An open reference to a pooled object; the object lives while any handle to it is open.
 *
 * <pre>{@code
 * try (Attachment attached = pool.attach();
 *         Handle<Session> session = pool.acquire("tenant-7")) {
 *     Handle<Session> copy = session.share();          // +1, may be handed to another thread
 *     executor.execute(() -> {
 *         try (copy) {                                 // closed off-attachment: deferred
 *             copy.get().ping();
 *         }
 *     });
 *     session.get().query("select 1");
 * }
 * }</pre>
 *
 * <p>A handle is a capability: nothing but its own {@link #close()} (or the leak detector, once the
 * handle is unreachable) gives up its reference. Closing on a thread attached to the pool decrements
 * the count at once; closing anywhere else enqueues a pending decrement that the next attach applies.
 */
public interface Handle<V> extends AutoCloseable {
    /**
     * {@return the pooled object}
     *
     * @throws IllegalStateException if this handle is closed
     */
    V get();

    /**
     * Opens another handle to the same object (count + 1). Works on any thread, attached or not, and
     * never waits or defers.
     *
     * @return the new handle, to be closed on its own
     * @throws IllegalStateException if this handle is closed
     */
    Handle<V> share();

    /** {@return whether this handle is still open} */
    boolean isOpen();

    /**
     * Gives up this handle's reference: at once if the calling thread is attached, otherwise as a
     * pending decrement. A second close is a no-op and never decrements again.
     */
    @Override
    void close();
}
