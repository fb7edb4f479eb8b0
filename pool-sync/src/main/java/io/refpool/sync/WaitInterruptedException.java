package io.refpool.sync;

import java.util.Objects;

/**
 * A blocking wait that ended because its thread was interrupted, thrown by methods that declare
 * no {@link InterruptedException}: the pool's attach, acquire, call and section waits.
 *
 * <pre>{@code
 * try (Attachment attached = pool.attach()) {
 *     // ...
 * } catch (WaitInterruptedException e) {
 *     assert Thread.currentThread().isInterrupted(); // still set: stop what the thread was doing
 * }
 * }</pre>
 *
 * <p>The thread's interrupt status is set again before it is thrown, so code further up still
 * sees the interrupt; the {@link InterruptedException} that ended the wait is its cause. Nothing
 * the wait was for is held afterwards.
 *
 * <p>It is neither a {@link java.util.concurrent.CancellationException} (no token was cancelled)
 * nor a {@link WaitTimeoutException}. The blocking acquires of this package's locks follow
 * {@code java.util.concurrent} instead: they throw the checked {@link InterruptedException} and
 * clear the status.
 */
public class WaitInterruptedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What was waited for. */
    private final String resource;

    /**
     * Creates the exception; the caller sets the thread's interrupt status again.
     *
     * @param resource what was waited for, in words ("the attach gate of pool 'lua'")
     * @param cause the interrupt that ended the wait
     * @throws NullPointerException if {@code resource} is null
     */
    public WaitInterruptedException(String resource, InterruptedException cause) {
        super(
                "interrupted while waiting for " + Objects.requireNonNull(resource, "resource")
                        + "; the interrupt status is kept",
                cause);
        this.resource = resource;
    }

    /** {@return what was waited for} */
    public String resource() {
        return resource;
    }
}
