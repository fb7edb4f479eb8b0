package io.refpool.core.internal;

import io.refpool.sync.AsyncMutex;
import io.refpool.sync.AsyncSharedMutex;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.ReaderBiasedSharedMutex;
import java.util.concurrent.CompletionStage;

/**
 * What a thread passes to attach: the pool's {@link AsyncMutex} in {@code GLOBAL} mode, the read
 * side of its {@link ReaderBiasedSharedMutex} in the shared modes (whose write side is
 * {@code pool.stopTheWorld()}).
 *
 * <p>The uncontended entry is the lock's allocation-free {@code tryLock} pair; only a thread that
 * must wait holds a {@link Guard}. A shared entry taken with {@link #tryEnter} may be left by
 * {@link #leave} on another thread ({@code callAsync} holds the gate on one thread and runs on an
 * executor's), which the reader-biased lock allows: its holds are counts, not owners.
 */
abstract class Gate {
    /** {@return whether the gate was entered without waiting} */
    abstract boolean tryEnter(boolean exclusive);

    /**
     * {@return the guard of a shared entry through the plain gate word, taken when {@link #tryEnter}
     * failed only because the reader bias is off, or {@code null}}
     */
    Guard tryEnterUnbiased(boolean exclusive) {
        return null;
    }

    /** Forces the reader bias on or off, or ({@code null}) gives it back to revocations; tests only. */
    void setBiasPolicy(Boolean forced) {}

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

    /**
     * Any number of attached threads, or one {@code stopTheWorld()} section. An attach writes only its
     * thread's stripe of the lock, so attaches on different cores do not contend; an
     * {@code stopTheWorld()} section revokes the bias and waits for the attached threads to leave;
     * for a while after it (longer the longer the revocation took) attaches take the plain gate
     * word through {@link #tryEnterUnbiased}. Unlike the plain
     * {@link AsyncSharedMutex}, the exclusive try can fail while a thread is arriving to attach
     * and then backs out; {@code stopTheWorld()} then waits in line.
     */
    static final class Shared extends Gate {
        private final ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();

        /**
         * The guard of every hold taken with {@link #tryEnterUnbiased}: one object, since the pool
         * closes each such guard exactly once ({@link GateWaits#leave}), so nothing is allocated.
         */
        private final Guard wordHold = lock::unlockSharedUnbiased;

        @Override
        boolean tryEnter(boolean exclusive) {
            return exclusive ? lock.tryLock() : lock.tryLockShared();
        }

        @Override
        Guard tryEnterUnbiased(boolean exclusive) {
            return !exclusive && lock.tryLockSharedUnbiased() ? wordHold : null;
        }

        @Override
        void setBiasPolicy(Boolean forced) {
            lock.setBiasPolicy(forced);
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
