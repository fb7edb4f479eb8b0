package io.refpool.core.internal;

import io.refpool.sync.AsyncMutex;
import io.refpool.sync.AsyncSharedMutex;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.util.concurrent.CompletionStage;

/**
 * What a thread passes to attach: the pool's {@link AsyncMutex} in {@code GLOBAL} mode, the read
 * side of its {@link AsyncSharedMutex} in {@code SHARED} mode (whose write side is
 * {@code pool.stopTheWorld()}).
 *
 * <p>The uncontended entry is the lock's allocation-free {@code tryLock} pair; only a thread that
 * must wait holds a {@link Guard}.
 */
abstract class Gate {
    /** {@return whether the gate was entered without waiting} */
    abstract boolean tryEnter(boolean exclusive);

    /** Leaves a gate entered by {@link #tryEnter}. */
    abstract void leave(boolean exclusive);

    /** Waits in line for the gate, parking. */
    abstract Guard enterBlocking(boolean exclusive, CancellationToken token) throws InterruptedException;

    /** Waits in line for the gate without parking a thread. */
    abstract CompletionStage<Guard> enterAsync(boolean exclusive, CancellationToken token);

    /** {@return waiters in line (diagnostics)} */
    abstract int queueLength();

    /** One thread at a time. */
    static final class Exclusive extends Gate {
        private final AsyncMutex mutex = new AsyncMutex();

        @Override
        boolean tryEnter(boolean exclusive) {
            return mutex.tryLock();
        }

        @Override
        void leave(boolean exclusive) {
            mutex.unlock();
        }

        @Override
        Guard enterBlocking(boolean exclusive, CancellationToken token) throws InterruptedException {
            return mutex.acquireBlocking(token);
        }

        @Override
        CompletionStage<Guard> enterAsync(boolean exclusive, CancellationToken token) {
            return mutex.acquire(token);
        }

        @Override
        int queueLength() {
            return mutex.queueLength();
        }
    }

    /** Any number of attached threads, or one {@code exclusive()} section. */
    static final class Shared extends Gate {
        private final AsyncSharedMutex lock = new AsyncSharedMutex();

        @Override
        boolean tryEnter(boolean exclusive) {
            return exclusive ? lock.tryLock() : lock.tryLockShared();
        }

        @Override
        void leave(boolean exclusive) {
            if (exclusive) {
                lock.unlock();
            } else {
                lock.unlockShared();
            }
        }

        @Override
        Guard enterBlocking(boolean exclusive, CancellationToken token) throws InterruptedException {
            return exclusive ? lock.acquireBlocking(token) : lock.acquireSharedBlocking(token);
        }

        @Override
        CompletionStage<Guard> enterAsync(boolean exclusive, CancellationToken token) {
            return exclusive ? lock.acquire(token) : lock.acquireShared(token);
        }

        @Override
        int queueLength() {
            return lock.queueLength();
        }
    }
}
