package io.refpool.sync;

import java.time.Duration;

/**
 * Requests cancellation of the operations that hold its {@link #token()}.
 *
 * <pre>{@code
 * try (CancellationSource source = new CancellationSource()) {
 *     source.cancelAfter(Duration.ofSeconds(5));
 *     mutex.acquire(source.token());
 * }
 * }</pre>
 */
public final class CancellationSource implements AutoCloseable {
    /** Creates a source that is not cancelled. */
    public CancellationSource() {}

    /**
     * Creates a source cancelled when any of the given tokens is.
     *
     * @param tokens the parents
     * @return the linked source
     */
    public static CancellationSource linkedTo(CancellationToken... tokens) {
        throw new UnsupportedOperationException("not implemented");
    }

    /** {@return the token of this source} */
    public CancellationToken token() {
        throw new UnsupportedOperationException("not implemented");
    }

    /**
     * Requests cancellation.
     *
     * @return true if this call cancelled
     */
    public boolean cancel() {
        throw new UnsupportedOperationException("not implemented");
    }

    /**
     * Cancels after the delay.
     *
     * @param delay the delay
     */
    public void cancelAfter(Duration delay) {
        throw new UnsupportedOperationException("not implemented");
    }

    /** {@return whether cancellation was requested} */
    public boolean isCancellationRequested() {
        throw new UnsupportedOperationException("not implemented");
    }

    /** Drops links and timers; does not cancel. */
    @Override
    public void close() {}
}
