package io.refpool.sync;

import java.util.concurrent.CompletionStage;

/**
 * Observes cancellation requested through a {@link CancellationSource}.
 *
 * <pre>{@code
 * CancellationSource source = new CancellationSource();
 * CancellationToken token = source.token();
 * try (Registration r = token.register(() -> System.out.println("cancelled"))) {
 *     source.cancel();
 * }
 * }</pre>
 */
public abstract class CancellationToken {
    CancellationToken() {}

    /** {@return the token that never cancels}; {@link #register} on it allocates nothing. */
    public static CancellationToken none() {
        throw new UnsupportedOperationException("not implemented");
    }

    /** {@return whether cancellation has been requested} */
    public abstract boolean isCancellationRequested();

    /** {@return whether this token can ever be cancelled}; false only for {@link #none()}. */
    public abstract boolean canBeCancelled();

    /**
     * Registers a callback to run when cancellation is requested.
     *
     * @param callback the action
     * @return the registration
     */
    public abstract Registration register(Runnable callback);

    /** {@return a stage completed when cancellation is requested} */
    public abstract CompletionStage<Void> whenCancelled();

    /** Throws {@link java.util.concurrent.CancellationException} if cancellation was requested. */
    public abstract void throwIfCancellationRequested();
}
