package io.refpool.core;

/**
 * Thrown by an attached {@link RefPool#acquire} that would have to create an object while
 * {@code maxObjects} objects exist and none of them is idle.
 *
 * <pre>{@code
 * try {
 *     handle = pool.acquire(key);
 * } catch (CapacityExhaustedException full) {
 *     handle = pool.acquire(key, Duration.ofSeconds(5)); // waits in line, the attachment suspended
 * }
 * }</pre>
 *
 * <p>An attached {@code acquire(key)} never blocks on capacity: it would wait while holding the gate
 * that the releases it waits for need. {@link RefPool#acquire(Object, java.time.Duration)} waits in
 * line with the thread's attachment suspended, and {@link RefPool#acquireAsync} waits without a
 * thread. Do not block on {@code acquireAsync}'s stage while attached: in {@code GLOBAL} mode the
 * release it waits for needs the gate the blocked thread holds.
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
