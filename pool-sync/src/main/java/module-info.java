/**
 * Cancellation tokens and FIFO async locks built on one shared waiter queue.
 *
 * <p>Only {@code io.refpool.sync} is exported; the waiter queue lives in an internal package.
 */
module io.refpool.sync {
    exports io.refpool.sync;
}
