package io.refpool.sync.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * The locked recheck of the waiter queue under the shared mutex's policy, with the reader's CAS
 * there made to lose to another reader deterministically: the other reader acquires from another
 * thread between the recheck's read of the state and its CAS. The reader must retry and acquire,
 * never queue behind readers (Elio #1063).
 *
 * <p>{@link SharedSync} is final, so the queue under test delegates the policy to a real
 * {@code SharedSync} and adds one seam: a task run on the first eligibility check after it was armed,
 * which in the locked recheck sits exactly between the read and the CAS.
 */
class SharedMutexLockedRecheckTest {

    /** The waiter queue with {@link SharedSync}'s policy and a seam inside the eligibility check. */
    private static final class SharedPolicyQueue extends WaiterQueue {
        private final SharedSync policy = new SharedSync(SharedSync.MAX_READERS);
        private volatile Runnable onNextEligibilityCheck;

        SharedPolicyQueue() {
            super(0L);
        }

        void armEligibilityCheck(Runnable task) {
            onNextEligibilityCheck = task;
        }

        /** A reader's fast path: one CAS while nobody is queued and the policy admits a reader. */
        boolean tryLockShared() {
            for (; ; ) {
                long s = state();
                if ((s & QUEUED) != 0 || !policy.isEligible(s, SharedSync.READ)) {
                    return false;
                }
                if (casState(s, policy.assigned(s, SharedSync.READ))) {
                    return true;
                }
            }
        }

        int readers() {
            return (int) (state() & SharedSync.READERS);
        }

        @Override
        protected boolean tryAcquireForGuard(int arg) {
            return arg == SharedSync.READ && tryLockShared();
        }

        @Override
        protected boolean isEligible(long s, int arg) {
            Runnable task = onNextEligibilityCheck;
            if (task != null) {
                onNextEligibilityCheck = null;
                task.run();
            }
            return policy.isEligible(s, arg);
        }

        @Override
        protected long assigned(long s, int arg) {
            return policy.assigned(s, arg);
        }

        @Override
        protected long released(long s, int arg) {
            return policy.released(s, arg);
        }

        @Override
        protected long releasedRaw(long s, int arg) {
            return policy.releasedRaw(s, arg);
        }

        @Override
        protected void checkMayWait(long s, int arg) {
            policy.checkMayWait(s, arg);
        }

        @Override
        public void release(int arg) {
            for (; ; ) {
                long s = state();
                if ((s & QUEUED) != 0) {
                    releaseSlow(arg);
                    return;
                }
                if (casState(s, released(s, arg))) {
                    return;
                }
            }
        }

        @Override
        protected String describe() {
            return "shared-policy queue";
        }
    }

    @Test
    void readerWhoseLockedRecheckCasLosesToAnotherReaderRetriesAndAcquires() {
        SharedPolicyQueue queue = new SharedPolicyQueue();
        assertTrue(queue.tryLockShared(), "reader B holds");

        // reader A's fast path has failed (as when a writer held a moment ago); in its locked
        // recheck, reader C acquires from another thread after A read the state and before A's CAS
        queue.armEligibilityCheck(
                () -> CompletableFuture.runAsync(() -> assertTrue(queue.tryLockShared(), "reader C acquires"))
                        .join());
        CompletionStage<Guard> a = queue.acquireAsync(SharedSync.READ, CancellationToken.none());

        assertTrue(a.toCompletableFuture().isDone(), "reader A must acquire, not queue behind readers");
        assertEquals(0, queue.queueLength());
        assertEquals(3, queue.readers());
        assertEquals(0L, queue.state() & WaiterQueue.QUEUED);

        a.toCompletableFuture().join().close();
        queue.release(SharedSync.READ);
        queue.release(SharedSync.READ);
        assertEquals(0L, queue.state());
    }

    @Test
    void writerWhoseLockedRecheckSeesAReaderArriveQueuesAndIsGrantedWhenItLeaves() {
        SharedPolicyQueue queue = new SharedPolicyQueue();

        // the lock is free when writer W reads the state; a reader takes it before W's CAS
        queue.armEligibilityCheck(
                () -> CompletableFuture.runAsync(() -> assertTrue(queue.tryLockShared(), "reader acquires"))
                        .join());
        CompletionStage<Guard> w = queue.acquireAsync(SharedSync.WRITE, CancellationToken.none());

        assertEquals(1, queue.queueLength(), "the writer must wait for the reader");
        queue.release(SharedSync.READ);
        assertTrue(w.toCompletableFuture().isDone(), "the reader's release must hand the lock to the writer");
        w.toCompletableFuture().join().close();
        assertEquals(0L, queue.state());
    }
}
