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
        return NONE;
    }

    private static final Registration NO_REGISTRATION = new Registration() {
        @Override
        public boolean unregister() {
            return false;
        }

        @Override
        public void close() {}
    };

    private static final CancellationToken NONE = new CancellationToken() {
        @Override
        public boolean isCancellationRequested() {
            return false;
        }

        @Override
        public boolean canBeCancelled() {
            return false;
        }

        @Override
        public Registration register(Runnable callback) {
            java.util.Objects.requireNonNull(callback, "callback");
            return NO_REGISTRATION;
        }

        @Override
        public CompletionStage<Void> whenCancelled() {
            return new java.util.concurrent.CompletableFuture<Void>().minimalCompletionStage();
        }

        @Override
        public void throwIfCancellationRequested() {}
    };

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
