package io.refpool.core;

/**
 * A void body that {@code pool.runAttached} runs attached, which may throw a checked exception;
 * {@code runAttached} rethrows it as it is.
 *
 * <pre>{@code
 * pool.runAttached(() -> {
 *     try (Handle<Session> session = pool.acquire("tenant-7")) {
 *         session.run(s -> s.refresh());
 *     }
 * });
 * }</pre>
 *
 * @param <E> the checked exception it may throw
 */
@FunctionalInterface
public interface AttachedAction<E extends Exception> {
    /**
     * Runs attached.
     *
     * @throws E what {@code runAttached} rethrows
     */
    void run() throws E;
}
