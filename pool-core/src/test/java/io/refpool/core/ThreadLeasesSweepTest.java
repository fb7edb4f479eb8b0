package io.refpool.core;

import static io.refpool.core.ThreadLeasesWithBoundsTest.request;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.unstarted;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.core.internal.ReleaseQueueHooks;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * The sweep of thread leases against what needs a lease's reference back: a creation short of
 * capacity and {@code clearIdle} that run while the sweeper has ended a lease but not yet queued
 * its reference; a creation short of capacity pausing leasing; and a lease in use across sweeps,
 * which is not unused the moment its borrow comes back. Sweeps run by hand (a period of an hour).
 */
class ThreadLeasesSweepTest {
    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> leasing(RefPool.Builder<String, Resource> builder) {
        return ThreadLeasesWithBoundsTest.leasing(resources, builder);
    }

    /**
     * Holds the sweeper's thread after it ended {@code key}'s only lease and before it queued the
     * reference, runs {@code action} on another thread until it waits for that reference (or
     * returns without it), then lets the sweeper go. {@return what {@code action} returned}
     */
    private static int whileTheSweeperHoldsAnEndedLease(
            RefPool<String, Resource> pool, String key, ToIntFunction<RefPool<String, Resource>> action)
            throws Exception {
        pool.core().leasesForTests().sweepAsSweeper(); // used since it was made: kept, its mark cleared
        assertEquals(1, pool.core().leasesForTests().leasesOn(key));
        Forked<Void> sweeper =
                unstartedRun("sweeper", () -> pool.core().leasesForTests().sweepAsSweeper());
        TestReleaseHooks queueing = TestReleaseHooks.pausing(ReleaseQueueHooks.Point.QUEUE_LOCK, sweeper.thread);
        pool.core().releaseQueue().setHooks(queueing);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        PointPauses.Pause awaiting = hooks.pause(Point.SWEEP_AWAITED, null);
        sweeper.start();
        Forked<Integer> acting;
        try {
            queueing.awaitArrival(); // the lease ended; its reference is neither the lease's nor queued
            assertEquals(0, pool.core().leasesForTests().leasesOn(key));
            acting = fork("acting", () -> action.applyAsInt(pool));
            // it waits for the sweeper's end in flight, or (were that end missed) finished without it
            eventually().until(() -> hooks.count(Point.SWEEP_AWAITED) > 0 || acting.outcome.isDone());
            if (hooks.count(Point.SWEEP_AWAITED) > 0) {
                awaiting.awaitArrival();
                awaiting.proceed();
            }
        } finally {
            queueing.proceed();
        }
        sweeper.join();
        return acting.join();
    }

    @Test
    void aCreationShortOfCapacityGetsThePermitOfALeaseTheSweeperIsEnding() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().maxObjects(1));
        try {
            Resource a = request(pool, "a"); // leased: a holds the one permit
            int created = whileTheSweeperHoldsAnEndedLease(pool, "a", p -> {
                request(p, "b"); // needs a's permit: refused, were a's reference not waited for
                return resources.createdCount();
            });
            assertEquals(2, created);
            assertEquals(1, a.disposals.get(), "a was disposed for b's permit");
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void clearIdleDisposesAnObjectWhoseLeaseTheSweeperIsEnding() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().idle(cache -> cache.maximumSize(8)));
        try {
            Resource a = request(pool, "a");
            int cleared = whileTheSweeperHoldsAnEndedLease(pool, "a", RefPool::clearIdle);
            assertEquals(1, cleared);
            assertEquals(1, a.disposals.get(), "a, which only the ended lease kept, stayed");
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void clearIdleDisposesAnObjectWhoseLeaseTheSweeperEndsDuringItsPass() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().idle(cache -> cache.maximumSize(8)));
        try {
            Resource a = request(pool, "a"); // leased by this thread ("a" is scanned before "b")
            Resource b = request(pool, "b"); // leased by this thread
            pool.core().leasesForTests().sweepAsSweeper(); // both used since made: kept, marks cleared
            assertEquals(1, pool.core().leasesForTests().leasesOn("a"));
            assertEquals(1, pool.core().leasesForTests().leasesOn("b"));
            Forked<Integer> clearing = unstarted("clearing", pool::clearIdle);
            Forked<Void> sweeper =
                    unstartedRun("sweeper", () -> pool.core().leasesForTests().sweepAsSweeper());
            TestPoolHooks hooks = new TestPoolHooks();
            // the clearer ends a's lease in its pass, before the sweep starts: a reaches zero
            PointPauses.Pause clearerAtA = hooks.pause(Point.REACHED_ZERO, clearing.thread);
            pool.core().setHooks(hooks);
            TestReleaseHooks queueing = TestReleaseHooks.pausing(ReleaseQueueHooks.Point.QUEUE_LOCK, sweeper.thread);
            pool.core().releaseQueue().setHooks(queueing);
            clearing.start();
            clearerAtA.awaitArrival(); // in the middle of its pass
            sweeper.start();
            try {
                queueing.awaitArrival(); // the sweeper ended b's lease; b's reference is not queued yet
                assertEquals(0, pool.core().leasesForTests().leasesOn("b"));
                clearerAtA.proceed(); // the pass goes on to b, whose lease it no longer sees
                eventually().until(() -> clearing.outcome.isDone() || hooks.count(Point.SWEEP_AWAITED) > 0);
            } finally {
                queueing.proceed();
            }
            sweeper.join();
            int cleared = clearing.join();
            assertEquals(1, a.disposals.get());
            assertEquals(2, cleared, "clearIdle did not dispose b, which only an unborrowed lease kept");
            assertEquals(1, b.disposals.get(), "b, whose only lease ended during clearIdle, stayed");
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
    }

    @Test
    void aCreationShortOfCapacityPausesLeasingThoughEveryLeaseLendsSomething() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().maxObjects(2));
        try {
            request(pool, "a"); // leased
            Handle<Resource> heldC = pool.acquireAsync("c", CancellationToken.none())
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            try (Attachment attached = pool.attach()) {
                Handle<Resource> heldA = pool.acquire("a"); // borrowed: a's lease lends now, so no lease ends
                assertThrows(CapacityExhaustedException.class, () -> pool.acquire("b"));
                heldC.close();
                heldA.close();
            }
            request(pool, "d"); // a permit is free again, within the pause
            assertEquals(0, pool.core().leasesForTests().leasesOn("d"), "leased while leasing was paused");
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
    }

    @Test
    void aLeaseInUseAcrossSweepsIsKeptAtTheSweepRightAfterItsBorrowCameBack() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().idle(cache -> cache.maximumSize(8)));
        try {
            Resource k = request(pool, "k"); // leased
            try (Attachment attached = pool.attach()) {
                Handle<Resource> held = pool.acquire("k"); // borrowed from the lease
                pool.core().leasesForTests().sweep(); // used since it was made: kept
                pool.core().leasesForTests().sweep(); // lending the whole period: kept
                held.close(); // in use until now
            }
            pool.core().leasesForTests().sweep();
            assertEquals(1, pool.core().leasesForTests().leasesOn("k"), "ended as unused a moment after its use");
            pool.core().leasesForTests().sweep(); // a whole period unused now
            assertEquals(0, pool.core().leasesForTests().leasesOn("k"), "kept though unused for a period");
            assertSame(k, request(pool, "k"), "idle, not disposed");
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
        resources.assertAllDisposedOnceAttached();
    }
}
