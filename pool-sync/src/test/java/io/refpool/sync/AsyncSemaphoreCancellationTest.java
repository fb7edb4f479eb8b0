package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertPermits;
import static io.refpool.sync.SyncTesting.awaitQueued;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What cancellation means for {@link AsyncSemaphore}'s own partial grants: a cancelled request,
 * through its future or a token, costs no permit, its permits go to the next requests in order, and a
 * cancelled large head admits the smaller requests behind it at once. What every primitive shares is
 * in {@link WaitCancellationTest}, {@link WaitTokenCancellationTest} and {@link
 * GrantVersusCancelRaceTest}.
 */
class AsyncSemaphoreCancellationTest {

    @Test
    void cancelThenReleaseLosesNoPermitAndGrantsTheNextRequest() {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        assertTrue(semaphore.tryAcquirePermits(3));
        CompletableFuture<Guard> cancelled = waiting(semaphore.acquire(2));
        CompletableFuture<Guard> next = waiting(semaphore.acquire(2));

        assertTrue(cancelled.cancel(true));
        semaphore.release(3);

        Guard guard = granted(next);
        assertEquals(1, semaphore.availablePermits(), "three released, two granted to the next request");
        guard.close();
        assertPermits(semaphore, 3);
    }

    @Test
    void cancellingTheLargeHeadAdmitsTheSmallerRequestsBehindItAtOnce() {
        AsyncSemaphore semaphore = new AsyncSemaphore(2, 4);
        CompletableFuture<Guard> large = waiting(semaphore.acquire(4));
        CompletableFuture<Guard> small1 = waiting(semaphore.acquire(1));
        CompletableFuture<Guard> small2 = waiting(semaphore.acquire(1));
        CompletableFuture<Guard> small3 = waiting(semaphore.acquire(1));

        assertTrue(large.cancel(true)); // no release happens: the cancel itself reassigns

        Guard g1 = granted(small1);
        Guard g2 = granted(small2);
        assertFalse(small3.isDone(), "two permits, two small requests");
        assertEquals(0, semaphore.availablePermits());
        g1.close();
        granted(small3).close();
        g2.close();
        assertPermits(semaphore, 2); // created with two of four
    }

    @Test
    void cancelWinsOverAPoppedGrantAndItsPermitsGoToTheNextRequests() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 3);
        CompletableFuture<Guard> popped = waiting(semaphore.acquire(3));
        CompletableFuture<Guard> next1 = waiting(semaphore.acquire(1));
        CompletableFuture<Guard> next2 = waiting(semaphore.acquire(2));
        PausingHooks paused = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION);
        SyncTesting.queueOf(semaphore).setHooks(paused);
        TestKit.Forked<Void> releaser = fork("releaser", () -> {
            semaphore.release(3);
            return null;
        });
        paused.awaitArrival(); // the head is popped with all three permits

        assertEquals(0, semaphore.availablePermits());
        assertTrue(popped.cancel(true));
        paused.proceed();
        releaser.join();

        Guard g1 = granted(next1);
        Guard g2 = granted(next2);
        assertEquals(0, semaphore.availablePermits());
        g1.close();
        g2.close();
        SyncTesting.queueOf(semaphore).setHooks(null);
        assertPermits(semaphore, 3);
    }

    @Test
    void aPoppedHeadWhosePermitsTheReleaseHandsBackServesTheRequestsBehindInOrder() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 10);
        java.util.List<String> completed = new java.util.concurrent.CopyOnWriteArrayList<>();
        CompletableFuture<Guard> a = waiting(semaphore.acquire(2));
        CompletableFuture<Guard> b = waiting(semaphore.acquire(1));
        CompletableFuture<Guard> c = waiting(semaphore.acquire(2));
        b.thenRun(() -> completed.add("B"));
        c.thenRun(() -> completed.add("C"));
        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", () -> semaphore.release(3)); // A and B
        TestKit.Forked<Boolean> canceller = TestKit.unstarted("canceller", () -> a.cancel(true));
        PausingHooks hooks = new PausingHooks(Point.BETWEEN_POP_AND_COMPLETION, releaser.thread, 1);
        io.refpool.testkit.PointPauses.Pause cancelWon = hooks.pause(Point.CANCEL_WON, canceller.thread, 1);
        SyncTesting.queueOf(semaphore).setHooks(hooks);
        releaser.start();
        hooks.awaitArrival(); // A and B popped with three permits; A not yet granted
        canceller.start();
        cancelWon.awaitArrival(); // A's cancel won; its permits not yet handed back

        hooks.proceed(); // the release finds A cancelled and hands its two permits back itself: C fits
        releaser.join();
        cancelWon.proceed();
        assertTrue(canceller.join());
        SyncTesting.queueOf(semaphore).setHooks(null);

        assertEquals(java.util.List.of("B", "C"), completed, "B was queued, and popped, before C");
        granted(b).close();
        granted(c).close();
        assertPermits(semaphore, 3);
    }

    @Test
    void timedOutRequestLeavesTheQueueAndTheNextOneIsServed() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(1, 3);
        TestKit.Forked<Optional<Guard>> timed = fork("timed", () -> semaphore.tryAcquire(3, Duration.ofMillis(30)));
        awaitQueued(semaphore, 1);
        CompletableFuture<Guard> behind = waiting(semaphore.acquire(1));

        assertEquals(Optional.empty(), timed.join());

        granted(behind).close(); // the timed-out head no longer holds it back
        assertPermits(semaphore, 1);
        semaphore.release(2);
        assertPermits(semaphore, 3);
    }

    @Test
    void tokenCancelOfTheLargeHeadAdmitsTheSmallerRequestsAtOnce() {
        AsyncSemaphore semaphore = new AsyncSemaphore(2, 4);
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> large = waiting(semaphore.acquire(4, source.token()));
        CompletableFuture<Guard> small1 = waiting(semaphore.acquire(1));
        CompletableFuture<Guard> small2 = waiting(semaphore.acquire(1));

        source.cancel();

        assertThrows(CancellationException.class, large::join);
        Guard g1 = granted(small1);
        Guard g2 = granted(small2);
        assertEquals(0, semaphore.availablePermits());
        g1.close();
        g2.close();
        assertPermits(semaphore, 2);
    }
}
