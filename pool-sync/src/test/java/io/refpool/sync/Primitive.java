package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.sync.internal.WaiterQueue;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.stream.Stream;

/**
 * The roles kit of the contract tests: every primitive seen as one lock that a holder takes without
 * waiting and waiters queue for, so that a guarantee the primitives share is written once and run
 * for each of them.
 *
 * <pre>{@code
 * @ParameterizedTest
 * @EnumSource(Primitive.class)
 * void cancelledWaiterOwnsNothing(Primitive primitive) {
 *     Primitive.Subject lock = primitive.create();
 *     lock.hold();
 *     CompletableFuture<Guard> waiter = waiting(lock.acquire());
 *     ...
 * }
 * }</pre>
 *
 * <p>The semaphore has two permits and every request asks for both, so it queues like a mutex while
 * a grant still moves more than one permit. The shared mutex appears twice: a writer waiting behind
 * a writer, and a reader waiting behind a writer with a writer as the next waiter, so a reader's
 * share is what a cancel or a grant decides about.
 */
enum Primitive {
    MUTEX {
        @Override
        Subject create() {
            return new MutexSubject();
        }
    },
    SEMAPHORE {
        @Override
        Subject create() {
            return new SemaphoreSubject();
        }
    },
    SHARED_MUTEX_WRITER {
        @Override
        Subject create() {
            return new SharedMutexSubject(false);
        }
    },
    SHARED_MUTEX_READER {
        @Override
        Subject create() {
            return new SharedMutexSubject(true);
        }
    };

    /** {@return a fresh, free lock of this primitive} */
    abstract Subject create();

    /** {@return the primitives whose waiters exclude each other, so a line of them is served one by one} */
    static Stream<Primitive> exclusive() {
        return Stream.of(MUTEX, SEMAPHORE, SHARED_MUTEX_WRITER);
    }

    /** One lock under test: what the holder takes, what a waiter asks for, and how to look at it. */
    abstract static class Subject {
        /** {@return the public type's name, which its messages carry} */
        abstract String typeName();

        /** {@return whether the holder took the lock without waiting} */
        abstract boolean tryHold();

        /** Takes the lock as the holder, asserting it was free. */
        final void hold() {
            assertTrue(tryHold(), () -> "the holder should take a free lock: " + this);
        }

        /** Releases what {@link #hold()} took, without a guard. */
        abstract void release();

        /** The acquire under test. */
        abstract CompletionStage<Guard> acquire();

        abstract CompletionStage<Guard> acquire(CancellationToken token);

        abstract Guard acquireBlocking() throws InterruptedException;

        abstract Guard acquireBlocking(CancellationToken token) throws InterruptedException;

        abstract Guard acquireBlocking(Duration timeout) throws InterruptedException;

        abstract Optional<Guard> tryAcquire();

        abstract Optional<Guard> tryAcquire(Duration timeout) throws InterruptedException;

        /** {@return an acquire that is granted only once the one under test is gone} */
        CompletionStage<Guard> acquireNext() {
            return acquire();
        }

        /** {@return whether anyone holds the lock} */
        abstract boolean isHeld();

        abstract int queueLength();

        abstract Object lock();

        final WaiterQueue queue() {
            return SyncTesting.queueOf(lock());
        }

        /**
         * {@return the holder's release, started on a thread of its own and paused between popping
         * the head waiter (assigned the lock, not yet granted) and completing it}
         */
        final PausedRelease releasePausedAfterPop() throws InterruptedException {
            TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", this::release);
            PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
            queue().setHooks(hooks);
            releaser.start();
            hooks.awaitArrival();
            return new PausedRelease(this, releaser, hooks);
        }

        /** Asserts that nobody holds or waits for the lock, and that a newcomer can take it. */
        void assertFreeAndUsable() {
            assertFalse(isHeld(), () -> "should be free: " + this);
            assertEquals(0, queueLength(), () -> "queue should be empty: " + this);
            assertTrue(tryHold(), () -> "a newcomer should take a free lock: " + this);
            release();
        }

        @Override
        public String toString() {
            return lock().toString();
        }
    }

    /** A release paused after it popped the head waiter; {@link #finish()} lets it complete. */
    static final class PausedRelease {
        private final Subject lock;
        private final TestKit.Forked<Void> releaser;
        private final PausingHooks hooks;

        private PausedRelease(Subject lock, TestKit.Forked<Void> releaser, PausingHooks hooks) {
            this.lock = lock;
            this.releaser = releaser;
            this.hooks = hooks;
        }

        /** Lets the release complete, waits for it and removes the hooks. */
        void finish() throws Exception {
            hooks.proceed();
            releaser.join();
            lock.queue().setHooks(null);
        }
    }

    private static final class MutexSubject extends Subject {
        private final AsyncMutex mutex = new AsyncMutex();

        @Override
        String typeName() {
            return "AsyncMutex";
        }

        @Override
        boolean tryHold() {
            return mutex.tryLock();
        }

        @Override
        void release() {
            mutex.unlock();
        }

        @Override
        CompletionStage<Guard> acquire() {
            return mutex.acquire();
        }

        @Override
        CompletionStage<Guard> acquire(CancellationToken token) {
            return mutex.acquire(token);
        }

        @Override
        Guard acquireBlocking() throws InterruptedException {
            return mutex.acquireBlocking();
        }

        @Override
        Guard acquireBlocking(CancellationToken token) throws InterruptedException {
            return mutex.acquireBlocking(token);
        }

        @Override
        Guard acquireBlocking(Duration timeout) throws InterruptedException {
            return mutex.acquireBlocking(timeout);
        }

        @Override
        Optional<Guard> tryAcquire() {
            return mutex.tryAcquire();
        }

        @Override
        Optional<Guard> tryAcquire(Duration timeout) throws InterruptedException {
            return mutex.tryAcquire(timeout);
        }

        @Override
        boolean isHeld() {
            return mutex.isLocked();
        }

        @Override
        int queueLength() {
            return mutex.queueLength();
        }

        @Override
        Object lock() {
            return mutex;
        }
    }

    private static final class SemaphoreSubject extends Subject {
        private static final int PERMITS = 2;
        private final AsyncSemaphore semaphore = new AsyncSemaphore(PERMITS);

        @Override
        String typeName() {
            return "AsyncSemaphore";
        }

        @Override
        boolean tryHold() {
            return semaphore.tryAcquirePermits(PERMITS);
        }

        @Override
        void release() {
            semaphore.release(PERMITS);
        }

        @Override
        CompletionStage<Guard> acquire() {
            return semaphore.acquire(PERMITS);
        }

        @Override
        CompletionStage<Guard> acquire(CancellationToken token) {
            return semaphore.acquire(PERMITS, token);
        }

        @Override
        Guard acquireBlocking() throws InterruptedException {
            return semaphore.acquireBlocking(PERMITS);
        }

        @Override
        Guard acquireBlocking(CancellationToken token) throws InterruptedException {
            return semaphore.acquireBlocking(PERMITS, token);
        }

        @Override
        Guard acquireBlocking(Duration timeout) throws InterruptedException {
            return semaphore.acquireBlocking(PERMITS, timeout);
        }

        @Override
        Optional<Guard> tryAcquire() {
            return semaphore.tryAcquire(PERMITS);
        }

        @Override
        Optional<Guard> tryAcquire(Duration timeout) throws InterruptedException {
            return semaphore.tryAcquire(PERMITS, timeout);
        }

        @Override
        boolean isHeld() {
            return semaphore.availablePermits() < PERMITS;
        }

        @Override
        int queueLength() {
            return semaphore.queueLength();
        }

        @Override
        Object lock() {
            return semaphore;
        }

        @Override
        void assertFreeAndUsable() {
            assertEquals(PERMITS, semaphore.availablePermits(), () -> "no permit may be lost: " + this);
            super.assertFreeAndUsable();
        }
    }

    /** The holder is a writer; the waiter under test a writer, or a reader with a writer behind it. */
    private static final class SharedMutexSubject extends Subject {
        private final AsyncSharedMutex lock = new AsyncSharedMutex();
        private final boolean reader;

        SharedMutexSubject(boolean reader) {
            this.reader = reader;
        }

        @Override
        String typeName() {
            return "AsyncSharedMutex";
        }

        @Override
        boolean tryHold() {
            return lock.tryLock();
        }

        @Override
        void release() {
            lock.unlock();
        }

        @Override
        CompletionStage<Guard> acquire() {
            return reader ? lock.acquireShared() : lock.acquire();
        }

        @Override
        CompletionStage<Guard> acquire(CancellationToken token) {
            return reader ? lock.acquireShared(token) : lock.acquire(token);
        }

        @Override
        Guard acquireBlocking() throws InterruptedException {
            return reader ? lock.acquireSharedBlocking() : lock.acquireBlocking();
        }

        @Override
        Guard acquireBlocking(CancellationToken token) throws InterruptedException {
            return reader ? lock.acquireSharedBlocking(token) : lock.acquireBlocking(token);
        }

        @Override
        Guard acquireBlocking(Duration timeout) throws InterruptedException {
            return reader ? lock.acquireSharedBlocking(timeout) : lock.acquireBlocking(timeout);
        }

        @Override
        Optional<Guard> tryAcquire() {
            return reader ? lock.tryAcquireShared() : lock.tryAcquire();
        }

        @Override
        Optional<Guard> tryAcquire(Duration timeout) throws InterruptedException {
            return reader ? lock.tryAcquireShared(timeout) : lock.tryAcquire(timeout);
        }

        @Override
        CompletionStage<Guard> acquireNext() {
            return lock.acquire();
        }

        @Override
        boolean isHeld() {
            return lock.isWriteLocked() || lock.readers() > 0;
        }

        @Override
        int queueLength() {
            return lock.queueLength();
        }

        @Override
        Object lock() {
            return lock;
        }

        @Override
        void assertFreeAndUsable() {
            SharedMutexTesting.assertFree(lock);
            super.assertFreeAndUsable();
        }
    }
}
