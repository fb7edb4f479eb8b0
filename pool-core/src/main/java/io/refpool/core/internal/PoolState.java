package io.refpool.core.internal;

import io.refpool.core.PoolError;

/**
 * What every owner may ask of the pool itself: whether it is closing, its name, where errors go,
 * and the test seam. The owners receive it instead of the pool, so none of them reaches a peer
 * through the pool.
 */
interface PoolState {
    /** {@return whether close() has begun}: from then on, new attaches and acquires are refused */
    boolean isClosed();

    /**
     * Waits until close() has finished (one must have begun); {@code false} at once on the thread
     * running it, which would wait for itself, and on a thread running the pool's interrupter,
     * whose call the close waits for.
     */
    boolean awaitCloseFinished() throws InterruptedException;

    /** {@return the pool's name}, for messages, JFR events and thread names */
    String name();

    /** Reports a failure to the pool's error listener (falling back to logging if it throws). */
    void report(PoolError.Kind kind, Object key, String message, Throwable cause);

    /** Counts a wait the pool ended with a {@code WaitTimeoutException}. */
    void timedOut();

    /** Passes a named point of the test seam. */
    void hook(PoolHooks.Point point);

    /** {@return "{@code operation} on closed pool 'name'"}, the message of a call refused after close */
    default String onClosedPool(String operation) {
        return operation + " on closed pool '" + name() + "'";
    }
}
