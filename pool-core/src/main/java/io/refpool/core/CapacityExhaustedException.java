package io.refpool.core;

/**
 * Thrown by an attached {@link RefPool#acquire} that would have to create an object while
 * {@code maxObjects} objects exist and none of them is idle.
 *
 * <pre>{@code
 * try {
 *     handle = pool.acquire(key);
 * } catch (CapacityExhaustedException full) {
 *     handle = pool.acquireAsync(key, token).toCompletableFuture().join();  // waits in line
 * }
 * }</pre>
 *
 * <p>An attached acquire never blocks on capacity: it would wait while holding the gate that the
 * releases it waits for need. {@link RefPool#acquireAsync} waits, in line, without being attached.
 */
public class CapacityExhaustedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the capacity and what was asked
     */
    public CapacityExhaustedException(String message) {
        super(message);
    }
}
