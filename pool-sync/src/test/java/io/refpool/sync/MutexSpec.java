package io.refpool.sync;

/**
 * The sequential FIFO lock that {@link AsyncMutex} must be linearizable to: the FIFO semaphore of
 * one permit, where every request is for the whole lock. A release hands the lock to the head
 * waiter; a cancelled waiter leaves the line; nobody takes a lock that someone waits for.
 */
public final class MutexSpec extends SemaphoreSpec {
    public MutexSpec() {
        super(1);
    }

    @Override
    int size(int requested) {
        return 1;
    }
}
