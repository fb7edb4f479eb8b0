package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Bad input to {@link AsyncMutex} gets a clear exception at the call and changes no state. */
class AsyncMutexBadInputTest {
    @Test
    void unlockOnAFreeMutexThrowsNamingTheState() {
        AsyncMutex mutex = new AsyncMutex();

        IllegalStateException e = assertThrows(IllegalStateException.class, mutex::unlock);

        assertTrue(e.getMessage().contains("AsyncMutex") && e.getMessage().contains("not locked"), e.getMessage());
        assertFreeAndUsable(mutex);
    }

    @Test
    void nullTokenThrowsNamingTheArgument() {
        AsyncMutex mutex = new AsyncMutex();

        NullPointerException async = assertThrows(NullPointerException.class, () -> mutex.acquire(null));
        NullPointerException blocking = assertThrows(NullPointerException.class, () -> mutex.acquireBlocking(null));

        assertEquals("token", async.getMessage());
        assertEquals("token", blocking.getMessage());
        assertFreeAndUsable(mutex);
    }

    @Test
    void nullTokenOnAHeldMutexQueuesNothing() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());

        assertThrows(NullPointerException.class, () -> mutex.acquire(null));

        assertEquals(0, mutex.queueLength());
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    @Test
    void nullTimeoutThrowsNamingTheArgument() {
        AsyncMutex mutex = new AsyncMutex();

        NullPointerException e = assertThrows(NullPointerException.class, () -> mutex.tryAcquire(null));

        assertEquals("timeout", e.getMessage());
        assertFreeAndUsable(mutex);
    }

    @Test
    void negativeTimeoutThrowsNamingTheArgumentAndValue() {
        AsyncMutex mutex = new AsyncMutex();

        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> mutex.tryAcquire(Duration.ofMillis(-1)));

        assertTrue(e.getMessage().contains("timeout") && e.getMessage().contains("PT-0.001S"), e.getMessage());
        assertFreeAndUsable(mutex);
    }

    @Test
    void negativeTimeoutOnAHeldMutexQueuesNothing() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> queued = waiting(mutex.acquire());

        assertThrows(IllegalArgumentException.class, () -> mutex.tryAcquire(Duration.ofSeconds(-5)));

        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        granted(queued).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void hugeTimeoutIsAcceptedAsWaitingLong() throws Exception {
        AsyncMutex mutex = new AsyncMutex();

        Guard guard = mutex.tryAcquire(Duration.ofSeconds(Long.MAX_VALUE)).orElseThrow();

        guard.close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void zeroTimeoutOnAHeldMutexDoesNotWait() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());

        assertTrue(mutex.tryAcquire(Duration.ZERO).isEmpty());

        assertEquals(0, mutex.queueLength());
        mutex.unlock();
        assertFreeAndUsable(mutex);
    }

    @Test
    void secondUnlockAfterAHandoffIsRefusedAndTheNewOwnerKeepsTheLock() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        CompletableFuture<Guard> next = waiting(mutex.acquire());
        CompletableFuture<Guard> last = waiting(mutex.acquire());
        mutex.unlock();
        Guard nextOwner = granted(next);
        long handedOver = SyncTesting.queueOf(mutex).state();

        IllegalStateException e = assertThrows(IllegalStateException.class, mutex::unlock);

        assertTrue(e.getMessage().contains("AsyncMutex") && e.getMessage().contains("Guard"), e.getMessage());
        assertEquals(handedOver, SyncTesting.queueOf(mutex).state());
        assertTrue(mutex.isLocked());
        assertEquals(1, mutex.queueLength());
        waiting(last);
        nextOwner.close();
        granted(last).close();
        assertFreeAndUsable(mutex);
    }

    @Test
    void unlockOfALockHeldThroughAGuardIsRefusedAndTheGuardStillReleasesIt() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        Guard guard = mutex.acquireBlocking();
        CompletableFuture<Guard> queued = waiting(mutex.acquire());

        assertThrows(IllegalStateException.class, mutex::unlock);

        assertTrue(mutex.isLocked());
        assertEquals(1, mutex.queueLength());
        waiting(queued);
        guard.close();
        granted(queued).close();
        assertFreeAndUsable(mutex);
    }
}
