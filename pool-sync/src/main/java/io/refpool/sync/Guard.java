package io.refpool.sync;

/**
 * Ownership of a lock or of semaphore permits, given up by {@link #close()}.
 *
 * <pre>{@code
 * AsyncMutex mutex = new AsyncMutex();
 * try (Guard guard = mutex.acquireBlocking()) {
 *     // exclusive section
 * }
 * }</pre>
 *
 * <p>Every lock of this package hands out the same kind of guard. {@code close()} releases exactly
 * once: a second call, from any thread, is a no-op, and a guard closed after its lock was acquired
 * again by someone else never releases that later ownership. Guards are not reentrant.
 */
public interface Guard extends AutoCloseable {
    /** Releases what this guard owns; does nothing if it was already released. */
    @Override
    void close();
}
