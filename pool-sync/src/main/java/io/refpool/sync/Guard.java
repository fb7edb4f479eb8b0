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
 *
 * <p>A guard is the owner token the raw pairs ({@code tryLock}/{@code unlock},
 * {@code tryAcquirePermits}/{@code release}) lack: a raw {@code unlock()} or {@code release(n)}
 * refuses what a guard holds, so only {@code close()} gives it back. The one exception is a reader
 * of {@link AsyncSharedMutex}, whose readers are a single count.
 */
public interface Guard extends AutoCloseable {
    /** Releases what this guard owns; does nothing if it was already released. */
    @Override
    void close();
}
