package io.refpool.sync;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The real primitive behind the Lincheck tests, with the role each Lincheck thread plays: idle,
 * holder of permits taken without waiting, or holder of an acquire future (waiting or granted).
 * Every operation is non-blocking; one that does not apply to the thread's current role answers
 * {@link #NOT_APPLICABLE} and changes nothing, as in {@link SemaphoreSpec}. A mutex is the
 * semaphore of one permit: the size of its requests does not apply to it.
 */
abstract class AcquireRoles {
    static final int NOT_APPLICABLE = -1;
    /** Lincheck numbers parallel threads from 1; 0 and the last are the init and post parts. */
    static final int SLOTS = 8;

    private final int[] heldWithoutWaiting = new int[SLOTS];

    @SuppressWarnings("unchecked")
    private final CompletableFuture<Guard>[] acquired = new CompletableFuture[SLOTS];

    abstract boolean tryTake(int n);

    abstract CompletionStage<Guard> acquireStage(int n);

    abstract void giveBack(int n);

    abstract int availablePermits();

    static AcquireRoles of(AsyncMutex mutex) {
        return new AcquireRoles() {
            @Override
            boolean tryTake(int n) {
                return mutex.tryLock();
            }

            @Override
            CompletionStage<Guard> acquireStage(int n) {
                return mutex.acquire();
            }

            @Override
            void giveBack(int n) {
                mutex.unlock();
            }

            @Override
            int availablePermits() {
                return mutex.isLocked() ? 0 : 1;
            }
        };
    }

    static AcquireRoles of(AsyncSemaphore semaphore) {
        return new AcquireRoles() {
            @Override
            boolean tryTake(int n) {
                return semaphore.tryAcquirePermits(n);
            }

            @Override
            CompletionStage<Guard> acquireStage(int n) {
                return semaphore.acquire(n);
            }

            @Override
            void giveBack(int n) {
                semaphore.release(n);
            }

            @Override
            int availablePermits() {
                return semaphore.availablePermits();
            }
        };
    }

    private boolean idle(int t) {
        return heldWithoutWaiting[t] == 0 && acquired[t] == null;
    }

    /** {@return 1 if the permits were taken, 0 if not} */
    int tryAcquire(int t, int n) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        if (tryTake(n)) {
            heldWithoutWaiting[t] = n;
            return 1;
        }
        return 0;
    }

    /**
     * {@return 0 once the acquire is issued}; whether it was granted shows in later operations,
     * since a waiter may be granted by a concurrent release before {@code acquire} returns.
     */
    int acquire(int t, int n) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        acquired[t] = acquireStage(n).toCompletableFuture();
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
    int acquireThenCancel(int t, int n) {
        if (!idle(t)) {
            return NOT_APPLICABLE;
        }
        CompletableFuture<Guard> f = acquireStage(n).toCompletableFuture();
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

    /** {@return 1 if this thread held permits and returned them, 0 if it is still waiting} */
    int release(int t) {
        int n = heldWithoutWaiting[t];
        if (n > 0) {
            heldWithoutWaiting[t] = 0;
            giveBack(n);
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
}
