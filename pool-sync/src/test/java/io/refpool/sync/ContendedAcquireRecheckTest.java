package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.assertPermits;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks;
import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The locked recheck: an acquire whose fast path failed, and that sees the lock released before it
 * publishes its waiter, takes the lock under the queue lock without ever being queued or parked.
 * The acquirer is paused at {@code AFTER_WAITER_ALLOCATED} while the holder releases.
 */
class ContendedAcquireRecheckTest {
    /** Pauses like {@link PausingHooks} and records every point reached. */
    private static final class RecordingHooks implements QueueHooks {
        final PausingHooks pause = new PausingHooks(Point.AFTER_WAITER_ALLOCATED);
        final Set<Point> reached = ConcurrentHashMap.newKeySet();

        @Override
        public void at(Point point) {
            reached.add(point);
            pause.at(point);
        }
    }

    @Test
    void asyncAcquireThatSeesTheReleaseBeforePublishingOwnsWithoutQueueing() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        RecordingHooks hooks = new RecordingHooks();
        SyncTesting.queueOf(mutex).setHooks(hooks);
        TestKit.Forked<CompletionStage<Guard>> acquirer = fork("acquirer", mutex::acquire);
        hooks.pause.awaitArrival(); // fast path failed, waiter allocated, queue lock not taken

        mutex.unlock(); // nobody is queued: the lock is simply freed
        assertFalse(mutex.isLocked());
        hooks.pause.proceed();
        CompletionStage<Guard> stage = acquirer.join();

        Guard guard = granted(stage); // already complete when acquire() returned
        assertFalse(hooks.reached.contains(Point.BEFORE_PUBLICATION), "the waiter was never published");
        assertEquals(0, mutex.queueLength());
        assertTrue(mutex.isLocked());
        guard.close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void blockingAcquireThatSeesTheReleaseBeforePublishingOwnsWithoutParking() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        RecordingHooks hooks = new RecordingHooks();
        SyncTesting.queueOf(mutex).setHooks(hooks);
        TestKit.Forked<Guard> acquirer = fork("acquirer", mutex::acquireBlocking);
        hooks.pause.awaitArrival();

        mutex.unlock();
        hooks.pause.proceed();
        Guard guard = acquirer.join();

        assertFalse(hooks.reached.contains(Point.BEFORE_PUBLICATION), "never queued, so never parked");
        assertEquals(0, mutex.queueLength());
        assertTrue(mutex.isLocked());
        guard.close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }

    @Test
    void semaphoreAcquireThatSeesTheReleaseBeforePublishingOwnsWithoutQueueing() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(1, 3);
        RecordingHooks hooks = new RecordingHooks();
        SyncTesting.queueOf(semaphore).setHooks(hooks);
        TestKit.Forked<CompletionStage<Guard>> acquirer = fork("acquirer", () -> semaphore.acquire(3));
        hooks.pause.awaitArrival();

        semaphore.release(2);
        hooks.pause.proceed();
        Guard guard = granted(acquirer.join());

        assertFalse(hooks.reached.contains(Point.BEFORE_PUBLICATION));
        assertEquals(0, semaphore.queueLength());
        assertEquals(0, semaphore.availablePermits());
        guard.close();
        SyncTesting.queueOf(semaphore).setHooks(null);
        assertPermits(semaphore, 3);
    }

    @Test
    void acquireThatStillSeesTheLockHeldAtTheRecheckIsQueued() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        RecordingHooks hooks = new RecordingHooks();
        SyncTesting.queueOf(mutex).setHooks(hooks);
        TestKit.Forked<CompletionStage<Guard>> acquirer = fork("acquirer", mutex::acquire);
        hooks.pause.awaitArrival();

        hooks.pause.proceed(); // the holder keeps the lock
        CompletionStage<Guard> stage = acquirer.join();

        assertTrue(hooks.reached.contains(Point.BEFORE_PUBLICATION));
        assertEquals(1, mutex.queueLength());
        assertFalse(stage.toCompletableFuture().isDone());
        mutex.unlock();
        granted(stage).close();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertFreeAndUsable(mutex);
    }
}
