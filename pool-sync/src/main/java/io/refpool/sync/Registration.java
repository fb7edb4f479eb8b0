package io.refpool.sync;

/**
 * A callback registered on a {@link CancellationToken}.
 *
 * <pre>{@code
 * try (Registration r = token.register(() -> connection.abort())) {
 *     connection.send(request);
 * } // from here on the callback is not running and will not run
 * }</pre>
 *
 * <p>{@link #unregister()} removes the callback without waiting. {@link #close()} removes it and,
 * if it is running on another thread at that moment, waits until it has finished, so state the
 * callback touches may be released after {@code close()} returns. Inside a callback dispatch (on a
 * thread running callbacks of any source) {@code close()} never waits, which rules out a callback
 * waiting for itself and two sources' callbacks waiting for each other.
 */
public interface Registration extends AutoCloseable {
    /**
     * Removes the callback without waiting.
     *
     * <pre>{@code
     * Registration timeoutHook = token.register(this::onTimeout);
     * if (response.arrived() && timeoutHook.unregister()) {
     *     // onTimeout never runs
     * }
     * }</pre>
     *
     * <p>A callback that is selected by a running {@code cancel()} but has not started yet can
     * still be removed (for example by an earlier callback of the same cancel), and then does not
     * run.
     *
     * @return true if this call removed the callback before it started, so it will never run;
     *     false if it already ran, is running, ran inline at registration, or was removed before
     */
    boolean unregister();

    /**
     * Removes the callback and, if it is running on another thread, waits until it has finished.
     * Returns at once when called on a thread that is running cancellation callbacks. Does not
     * throw; an interrupt while waiting is kept as the thread's interrupt status.
     *
     * <pre>{@code
     * Registration r = token.register(batch::discard);
     * r.close();
     * batch.release(); // safe: discard is not running and will not run
     * }</pre>
     */
    @Override
    void close();
}
