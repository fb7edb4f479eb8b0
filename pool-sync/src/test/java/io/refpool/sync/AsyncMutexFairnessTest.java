package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.awaitQueued;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** {@link AsyncMutex} serves waiters in call order and lets nobody barge past them. */
class AsyncMutexFairnessTest {
    private static final int WAITERS = 50;

    @Test
    void asyncWaitersAreGrantedInCallOrder() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            int index = i;
            mutex.acquire().thenAccept(guard -> {
                order.add(index);
                guard.close();
            });
        }
        assertEquals(WAITERS, mutex.queueLength());

        mutex.unlock();

        assertEquals(IntStream.range(0, WAITERS).boxed().collect(Collectors.toList()), order);
        assertFreeAndUsable(mutex);
    }

    @Test
    void blockingWaitersAreGrantedInCallOrder() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        List<Integer> order = new ArrayList<>(); // written under the mutex only
        List<TestKit.Forked<Void>> threads = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            int index = i;
            threads.add(fork("waiter-" + i, () -> {
                try (Guard guard = mutex.acquireBlocking()) {
                    order.add(index);
                }
                return null;
            }));
            awaitQueued(mutex, i + 1); // the next one calls only after this one is in line
        }

        mutex.unlock();
        for (TestKit.Forked<Void> t : threads) {
            t.join();
        }

        assertEquals(IntStream.range(0, 10).boxed().collect(Collectors.toList()), order);
        assertFreeAndUsable(mutex);
    }

    @Test
    void asyncAndBlockingWaitersShareOneLine() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        List<String> order = new ArrayList<>();
        mutex.acquire().thenAccept(guard -> {
            order.add("async-0");
            guard.close();
        });
        TestKit.Forked<Void> blocking = fork("blocking-1", () -> {
            try (Guard guard = mutex.acquireBlocking()) {
                order.add("blocking-1");
            }
            return null;
        });
        awaitQueued(mutex, 2);
        CompletableFuture<Void> last = mutex.acquire()
                .thenAccept(guard -> {
                    order.add("async-2");
                    guard.close();
                })
                .toCompletableFuture();

        mutex.unlock();
        blocking.join();
        last.get(TestKit.BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);

        assertEquals(List.of("async-0", "blocking-1", "async-2"), order);
        assertFreeAndUsable(mutex);
    }

    @Test
    void unlockHandsOwnershipToHeadWaiter() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> head = waiting(mutex.acquire());
        CompletableFuture<Guard> second = waiting(mutex.acquire());

        mutex.unlock();

        Guard guard = granted(head);
        assertFalse(second.isDone());
        assertTrue(mutex.isLocked(), "the lock passed to the head without ever being free");
        assertEquals(1, mutex.queueLength());
        guard.close();
        granted(second).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void newcomerCannotTakeTheLockWhileWaitersAreQueued() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> first = waiting(mutex.acquire());
        CompletableFuture<Guard> second = waiting(mutex.acquire());

        mutex.unlock(); // handoff to first; second still queued

        assertFalse(mutex.tryLock(), "tryLock after a handoff while the queue is non-empty");
        assertTrue(mutex.tryAcquire().isEmpty());
        granted(first).close(); // handoff to second; the queue is empty now
        assertFalse(mutex.tryLock(), "second owns the lock");
        granted(second).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void newcomerCannotBargeBetweenPopAndGrant() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> head = waiting(mutex.acquire());
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(mutex).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            mutex.unlock();
            return null;
        });
        paused.awaitArrival(); // head popped, not yet granted; the queue is empty

        assertEquals(0, mutex.queueLength());
        assertFalse(mutex.tryLock(), "a newcomer barged into a lock assigned to the popped head");
        assertTrue(mutex.tryAcquire(Duration.ZERO).isEmpty());
        CompletableFuture<Guard> newcomer = waiting(mutex.acquire());

        paused.proceed();
        releaser.join();
        granted(head).close();
        granted(newcomer).close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void tryAcquireWithTimeoutWaitsInLineBehindEarlierWaiters() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        List<String> order = new ArrayList<>();
        mutex.acquire().thenAccept(guard -> {
            order.add("first");
            guard.close();
        });
        TestKit.Forked<Boolean> timed = fork("timed", () -> {
            java.util.Optional<Guard> guard = mutex.tryAcquire(TestKit.BOUND);
            guard.ifPresent(g -> {
                order.add("timed");
                g.close();
            });
            return guard.isPresent();
        });
        awaitQueued(mutex, 2);

        mutex.unlock();

        assertTrue(timed.join());
        assertEquals(List.of("first", "timed"), order);
        assertFreeAndUsable(mutex);
    }
}
