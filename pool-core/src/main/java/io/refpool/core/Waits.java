package io.refpool.core;

import io.refpool.sync.WaitTimeoutException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/** Blocking on a stage of the pool's async forms, with the failures the blocking forms promise. */
final class Waits {
    private Waits() {}

    /**
     * {@return the handle {@code stage} completes with}, parking until it does. A timeout is thrown
     * as the {@link WaitTimeoutException} the stage failed with (JDK 23 and later wrap a stage's
     * cancellation in a new exception: it is unwrapped); an interrupt ends the wait, closes a handle
     * that arrives anyway, and keeps the interrupt status.
     */
    static <V> Handle<V> await(CompletionStage<Handle<V>> stage) {
        CompletableFuture<Handle<V>> waiting = stage.toCompletableFuture();
        try {
            return waiting.get();
        } catch (InterruptedException e) {
            if (!waiting.cancel(false) && !waiting.isCompletedExceptionally()) {
                waiting.join().close(); // granted just before the interrupt: nothing is held
            }
            Thread.currentThread().interrupt();
            throw new CancellationException(
                    "interrupted while waiting for an object of the pool; the interrupt status is kept");
        } catch (CancellationException e) {
            if (e.getCause() instanceof WaitTimeoutException) {
                throw (WaitTimeoutException) e.getCause();
            }
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new ObjectCreationException(
                    "creating an object failed with " + cause.getClass().getName(), cause);
        }
    }
}
