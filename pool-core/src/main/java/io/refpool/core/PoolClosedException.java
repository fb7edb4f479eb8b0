package io.refpool.core;

/**
 * Thrown by a pool that is closed, or that closed while the caller waited.
 *
 * <pre>{@code
 * pool.close();
 * try (Attachment attached = pool.attach()) {      // throws PoolClosedException
 *     pool.acquire("tenant-7").close();
 * } catch (PoolClosedException closed) {
 *     System.out.println("the pool is gone: " + closed.getMessage());
 * }
 * }</pre>
 */
public class PoolClosedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was refused
     */
    public PoolClosedException(String message) {
        super(message);
    }
}
