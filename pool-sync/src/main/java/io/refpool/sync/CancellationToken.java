package io.refpool.sync;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Observes cancellation requested through a {@link CancellationSource}.
 *
 * <pre>{@code
 * CancellationSource source = new CancellationSource();
 * CancellationToken token = source.token();
 * try (Registration r = token.register(() -> System.out.println("cancelled"))) {
 *     source.cancel(); // prints "cancelled" on this thread before cancel() returns
 * }
 * token.throwIfCancellationRequested(); // throws CancellationException
 * }</pre>
 *
 * <p>A token is handed to operations that should stop when asked; only its source can cancel it.
 * Methods that accept a token accept {@link #none()} for "never cancelled". Tokens are compared
 * by identity; a source always returns the same token.
 */
public abstract class CancellationToken {
    CancellationToken() {}

    /**
     * {@return the token that is never cancelled}
     *
     * <pre>{@code
     * Guard guard = mutex.acquireBlocking(CancellationToken.none());
     * }</pre>
     *
     * <p>{@link #register} on it allocates nothing and returns a shared registration whose {@code
     * unregister()} returns false.
     */
    public static CancellationToken none() {
        return NoneToken.INSTANCE;
    }

    /** {@return whether cancellation has been requested} */
    public abstract boolean isCancellationRequested();

    /**
     * {@return whether this token can ever be cancelled}; false only for {@link #none()}, so a
     * caller can skip registering.
     */
    public abstract boolean canBeCancelled();

    /**
     * Registers a callback to run when cancellation is requested.
     *
     * <pre>{@code
     * try (Registration r = token.register(() -> {
     *     try {
     *         channel.close(); // a read blocked on it ends with AsynchronousCloseException
     *     } catch (IOException ignored) {
     *         // the read ends all the same
     *     }
     * })) {
     *     channel.read(buffer);
     * }
     * }</pre>
     *
     * <p>Callbacks run synchronously on the thread that cancels the source, newest first, each at
     * most once. If the token is already cancelled, the callback runs now, on this thread, before
     * this method returns; an exception it throws propagates to the caller, and the returned
     * registration's {@code unregister()} returns false. Costs one small allocation; never blocks.
     *
     * @param callback the action to run on cancellation
     * @return the registration, to remove the callback again
     * @throws NullPointerException if {@code callback} is null; nothing is registered then
     */
    public abstract Registration register(Runnable callback);

    /**
     * {@return a stage completed (with null) when cancellation is requested}; it never completes
     * exceptionally. The stage is read-only: completing it, or a future obtained from it, does not
     * affect the token. A source's token returns the same stage on every call until it is cancelled.
     *
     * <pre>{@code
     * token.whenCancelled().thenRun(() -> log.info("request cancelled"));
     * }</pre>
     *
     * <p>Dependent actions added before cancellation run on the cancelling thread, before the
     * registered callbacks.
     */
    public abstract CompletionStage<Void> whenCancelled();

    /**
     * Throws if cancellation was requested.
     *
     * <pre>{@code
     * for (Item item : items) {
     *     token.throwIfCancellationRequested();
     *     process(item);
     * }
     * }</pre>
     *
     * @throws java.util.concurrent.CancellationException if cancellation was requested
     */
    public abstract void throwIfCancellationRequested();

    /** The token of no source. */
    private static final class NoneToken extends CancellationToken {
        static final NoneToken INSTANCE = new NoneToken();

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
            Objects.requireNonNull(callback, "callback");
            return CancellationNode.NO_OP;
        }

        /**
         * A fresh stage per call: one shared stage would keep every dependent ever added to it,
         * since it never completes.
         */
        @Override
        public CompletionStage<Void> whenCancelled() {
            return new CompletableFuture<Void>().minimalCompletionStage();
        }

        @Override
        public void throwIfCancellationRequested() {}

        @Override
        public String toString() {
            return "CancellationToken[none]";
        }
    }
}
