package io.refpool.sync;

import java.util.concurrent.CompletableFuture;

/**
 * The real {@link AsyncMutex} behind the Lincheck tests, with the role each Lincheck thread plays:
 * idle, owner through {@code tryLock}, or holder of an acquire future (waiting or granted). Every
 * operation is non-blocking. An operation that does not apply to the thread's current role answers
 * {@link #NOT_APPLICABLE} and changes nothing, as in {@link MutexSpec}.
 */
final class MutexRoles {
    static final int NOT_APPLICABLE = -1;
    /** Lincheck numbers parallel threads from 1; 0 and the last are the init and post parts. */
    static final int SLOTS = 8;

    private final AsyncMutex mutex = new AsyncMutex();
    private final boolean[] holdsByTryLock = new boolean[SLOTS];

    @SuppressWarnings("unchecked")
    private final CompletableFuture<Guard>[] acquired = new CompletableFuture[SLOTS];

    private boolean idle(int t) {
        return !holdsByTryLock[t] && acquired[t] == null;
    }

    /** {@return 1 if the lock was taken, 0 if not} */
    int tryLock(int t) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        holdsByTryLock[t] = mutex.tryLock();
        return holdsByTryLock[t] ? 1 : 0;
    }

    /**
     * {@return 0 once the acquire is issued}; whether it was granted shows in later operations,
     * since a waiter may be granted by a concurrent release before {@code acquire()} returns.
     */
    int acquire(int t) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        acquired[t] = mutex.acquire().toCompletableFuture();
        return 0;
    }

    /** {@return 1 if this thread's wait was cancelled, 0 if the grant had won (it then owns)} */
    int cancel(int t) {
        CompletableFuture<Guard> f = acquired[t];
        if (f == null) {
            return NOT_APPLICABLE;
        }
        if (f.isDone()) {
            return 0; // granted already (a cancelled future is forgotten at once)
        }
        return settleCancel(t, f, f.cancel(true)) ? 1 : 0;
    }

    /** Prompt cancellation: {@return 1 if the grant won over the cancel right after acquiring, else 0} */
    int acquireThenCancel(int t) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        CompletableFuture<Guard> f = mutex.acquire().toCompletableFuture();
        acquired[t] = f;
        return settleCancel(t, f, f.cancel(true)) ? 0 : 1;
    }

    private boolean settleCancel(int t, CompletableFuture<Guard> f, boolean cancelled) {
        if (cancelled) {
            if (!f.isCancelled()) {
                throw new AssertionError("cancel() returned true but the future is " + f);
            }
            acquired[t] = null;
            return true;
        }
        if (!f.isDone() || f.isCompletedExceptionally()) {
            throw new AssertionError("cancel() lost, so the grant must have won, but the future is " + f);
        }
        return false;
    }

    /** {@return 1 if this thread owned the lock and released it, 0 if it is still waiting} */
    int unlock(int t) {
        if (holdsByTryLock[t]) {
            holdsByTryLock[t] = false;
            mutex.unlock();
            return 1;
        }
        CompletableFuture<Guard> f = acquired[t];
        if (f == null) {
            return NOT_APPLICABLE;
        }
        if (!f.isDone()) {
            return 0;
        }
        acquired[t] = null;
        f.join().close();
        return 1;
    }

    boolean isLocked() {
        return mutex.isLocked();
    }
}
