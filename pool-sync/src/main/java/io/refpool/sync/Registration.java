package io.refpool.sync;

/**
 * A callback registered on a {@link CancellationToken}.
 *
 * <pre>{@code
 * try (Registration r = token.register(() -> System.out.println("cancelled"))) {
 *     doWork();
 * }
 * }</pre>
 */
public interface Registration extends AutoCloseable {
    /**
     * Removes the callback without waiting.
     *
     * @return true if removed before it was selected to run
     */
    boolean unregister();

    /** Unregisters and waits for a callback running on another thread to finish. */
    @Override
    void close();
}
