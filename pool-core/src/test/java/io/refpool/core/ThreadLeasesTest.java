package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.core.internal.ReleaseQueueHooks;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit.Forked;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Thread leases ({@code Builder.threadLeases}) through a real pool: what a lease keeps live, and
 * every way it ends (invalidation, {@code clearIdle}, close, the sweep of unused leases and of
 * leases whose thread is gone), each time with every object disposed exactly once, attached, and
 * never under an open handle. The forced race: an invalidation that retires the object between an
 * acquire's reference and the lease it would become.
 */
class ThreadLeasesTest {
    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> leasingPool(AttachMode mode) {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(mode)
                .threadLeases(Duration.ofHours(1)) // sweeps run by hand
                .drainDelay(Duration.ofHours(1)));
        pool.core().leasesForTests().leaseAtOnce();
        return pool;
    }

    private static Resource request(RefPool<String, Resource> pool, String key) {
        try (Attachment attached = pool.attach();
                Handle<Resource> handle = pool.acquire(key)) {
            return handle.get();
        }
    }

    @Test
    void aLeasedObjectStaysLiveWithNoHandleOpenAndIsLentAgain() {
        for (AttachMode mode : AttachMode.values()) {
            RefPool<String, Resource> pool = leasingPool(mode);
            Resource first = request(pool, "k");
            assertEquals(
                    1, pool.core().leasesForTests().leasesOn("k"), mode + ": the request's reference became a lease");
            assertEquals(1, pool.stats().live(), mode + ": the lease keeps it live");
            assertEquals(0, pool.stats().idle(), mode.name());
            assertSame(first, request(pool, "k"), mode.name());
            assertSame(first, pool.call("k", r -> r), mode + ": a call borrows too");
            assertEquals(1, pool.core().leasesForTests().leasesOn("k"), mode + ": borrowed, not leased again");
            assertEquals(0, first.disposals.get(), mode.name());
            pool.close();
            resources.assertAllDisposedOnceAttached();
        }
    }

    @Test
    void aThreadLeasesOnlyAfterItsFirstAcquires() {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(8)));
        for (int i = 0; i < 32; i++) {
            request(pool, "k");
            assertEquals(0, pool.core().leasesForTests().leasesOn("k"), "acquire " + (i + 1) + " leases nothing");
        }
        request(pool, "k");
        assertEquals(1, pool.core().leasesForTests().leasesOn("k"), "the 33rd acquire leases");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void invalidatingALeasedObjectWithNoHandleOpenDisposesItAtOnce() {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        Resource old = request(pool, "k");
        assertTrue(pool.invalidate("k"));
        assertEquals(1, old.disposals.get(), "disposed by the invalidation");
        assertEquals(0, pool.core().leasesForTests().leasesOn("k"));
        Resource fresh = request(pool, "k");
        assertNotSame(old, fresh, "the next request gets a new object");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void invalidatingALeasedObjectUnderAnOpenHandleDisposesItWhenTheHandleCloses() {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        request(pool, "k"); // the lease
        try (Attachment attached = pool.attach()) {
            Handle<Resource> held = pool.acquire("k"); // borrowed from the lease
            held.get().openHandles.incrementAndGet();
            assertTrue(held.invalidate());
            assertEquals(0, held.get().disposals.get(), "not under an open handle");
            Resource old = held.get();
            old.openHandles.decrementAndGet();
            held.close();
            assertEquals(1, old.disposals.get(), "disposed when the last borrow came back");
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aBorrowedHandleClosedOnAnotherThreadKeepsTheLease() throws Exception {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        Resource leased = request(pool, "k");
        Handle<Resource> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("k");
        }
        fork("closer", () -> {
                    held.close();
                    return null;
                })
                .join();
        pool.flush();
        assertEquals(1, pool.core().leasesForTests().leasesOn("k"));
        assertSame(leased, request(pool, "k"));
        assertEquals(0, leased.disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void clearIdleGivesBackLeasesWithNoHandleOpen() {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED); // no idle cache: disposed at zero
        Resource a = request(pool, "a");
        Handle<Resource> heldB;
        try (Attachment attached = pool.attach()) {
            request(pool, "b");
            heldB = pool.acquire("b"); // borrowed: b's lease stays
        }
        pool.clearIdle();
        assertEquals(1, a.disposals.get(), "a's lease lent nothing: given back, a disposed");
        assertEquals(1, pool.core().leasesForTests().leasesOn("b"), "b's lease lends the open handle");
        try (Attachment attached = pool.attach()) {
            heldB.close();
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSweepEndsLeasesUnusedSinceTheLastOne() {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(8))
                .drainDelay(Duration.ofHours(1)));
        pool.core().leasesForTests().leaseAtOnce();
        Resource hot = request(pool, "hot");
        Resource cold = request(pool, "cold");
        pool.core().leasesForTests().sweep(); // both used since: kept, marks cleared
        assertEquals(1, pool.core().leasesForTests().leasesOn("cold"));
        request(pool, "hot");
        pool.core().leasesForTests().sweep(); // cold unused since the last sweep
        pool.flush(); // the sweep's give-backs are pending releases
        assertEquals(0, pool.core().leasesForTests().leasesOn("cold"));
        assertEquals(1, pool.core().leasesForTests().leasesOn("hot"));
        assertEquals(1, pool.stats().idle(), "cold went idle, into the cache");
        assertEquals(0, cold.disposals.get() + hot.disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSweepEndsTheLeasesOfAThreadThatIsGone() throws Exception {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        Forked<Handle<Resource>> worker = fork("worker", () -> {
            request(pool, "k");
            try (Attachment attached = pool.attach()) {
                return pool.acquire("k"); // leaked by the thread: its lease lends it
            }
        });
        Handle<Resource> leaked = worker.join();
        Resource object = leaked.get();
        worker.thread.join();
        pool.core().leasesForTests().sweep();
        pool.flush();
        assertEquals(0, object.disposals.get(), "not under the open handle");
        leaked.close(); // the lease ends with it: its reference goes back as a pending release
        pool.flush();
        assertEquals(1, object.disposals.get(), "disposed once the leaked handle closed");
        assertEquals(0, pool.core().leasesForTests().leasesOn("k"));
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void closeGivesBackEveryLeaseAndAHandleOpenAtCloseStillDisposesOnce() {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        Resource idleLeased = request(pool, "a");
        request(pool, "b");
        Handle<Resource> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("b");
        }
        pool.close();
        assertEquals(1, idleLeased.disposals.get(), "a lease with nothing borrowed ends at close");
        Resource b = held.get();
        assertEquals(0, b.disposals.get());
        held.close(); // detached, on a closed pool: the drainer applies it
        Awaitility.await("the handle open at close ended the lease; its object disposed")
                .atMost(Duration.ofSeconds(30))
                .until(() -> b.disposals.get() == 1);
        assertTrue(
                resources.errors.stream().allMatch(e -> e.kind() == PoolError.Kind.HANDLES_OPEN_AT_CLOSE)
                        || resources.errors.isEmpty(),
                () -> "only the open handle is reported: " + resources.errors);
    }

    @Test
    void manyKeysOnOneThreadEachDisposeOnce() {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            keys.add("key-" + i);
        }
        for (int round = 0; round < 3; round++) {
            for (String key : keys) {
                request(pool, key);
            }
            pool.invalidate(keys.get(round));
        }
        pool.clearIdle();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * The race: an acquire's reference is about to become a lease when an invalidation retires the
     * object. The lease is refused, so the reference stays the handle's own and the object is
     * disposed when it closes; a lease made anyway would keep the retired object live for good.
     */
    @Test
    void anObjectRetiredWhileItsLeaseIsMadeIsNotLeased() throws Exception {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        PointPauses.Pause making = hooks.pause(Point.LEASE_MAKING, null);
        Forked<Resource> requester = fork("requester", () -> request(pool, "k"));
        making.awaitArrival();
        assertTrue(pool.invalidate("k"), "retires the object the requester holds");
        making.proceed();
        Resource old = requester.join();
        assertEquals(0, pool.core().leasesForTests().leasesOn("k"));
        assertEquals(1, old.disposals.get(), "disposed when the request's handle closed");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * A sweep ends a lease and is about to queue its reference when the pool closes: the close
     * waits for the sweep, then applies what it queued, so it returns with the object disposed and
     * reports no handle open. Before, the close returned first (the object still counted, reported
     * as held) and a drainer disposed the object after it.
     */
    @Test
    void aCloseWaitsForASweepUnderWayAndDisposesWhatItEnded() throws Exception {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        Resource leased = request(pool, "k");
        pool.core().leasesForTests().sweep(); // used since it was made: kept, its mark cleared
        Forked<Void> sweeper =
                unstartedRun("sweeper", () -> pool.core().leasesForTests().sweep());
        TestReleaseHooks hooks = TestReleaseHooks.pausing(ReleaseQueueHooks.Point.QUEUE_LOCK, sweeper.thread);
        pool.core().releaseQueue().setHooks(hooks);
        sweeper.start();
        hooks.awaitArrival(); // the lease ended; its reference not queued yet
        Forked<Void> closer = forkRun("closer", pool::close);
        Awaitility.await("the close waits for the sweep, or returns")
                .atMost(Duration.ofSeconds(30))
                .until(() -> closer.thread.getState() == Thread.State.BLOCKED || closer.outcome.isDone());
        if (closer.outcome.isDone()) {
            assertEquals(1, leased.disposals.get(), "close() returned with the swept object not disposed");
        }
        hooks.proceed();
        closer.join();
        sweeper.join();
        assertEquals(1, leased.disposals.get());
        resources.assertAllDisposedOnceAttached();
    }

    /** A lease that ended lets go of its object, though its thread's table still holds the lease. */
    @Test
    void anEndedLeaseDoesNotKeepItsDisposedObjectReachable() {
        RefPool<String, Object> pool = RefPool.builder((String k) -> new Object())
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .build();
        pool.core().leasesForTests().leaseAtOnce();
        WeakReference<Object> object = leasedAndForgotten(pool, "k");
        assertEquals(1, pool.core().leasesForTests().leasesOn("k"));
        assertTrue(pool.invalidate("k")); // the lease ends, the object is disposed
        Awaitility.await("the disposed object collected")
                .atMost(Duration.ofSeconds(30))
                .until(() -> {
                    System.gc();
                    return object.get() == null;
                });
        pool.close();
    }

    private static WeakReference<Object> leasedAndForgotten(RefPool<String, Object> pool, String key) {
        try (Attachment attached = pool.attach();
                Handle<Object> handle = pool.acquire(key)) {
            return new WeakReference<>(handle.get());
        }
    }

    /**
     * A thread that lost its attach state (a pool thread that clears its thread-locals between
     * tasks) borrows again from the lease it made before, instead of leasing the object once more
     * per task until a sweep ends the old ones.
     */
    @Test
    void aThreadThatLostItsStateReclaimsItsLease() {
        RefPool<String, Resource> pool = leasingPool(AttachMode.SHARED);
        Resource leased = request(pool, "k");
        for (int task = 0; task < 5; task++) {
            pool.core().leasesForTests().forgetThread();
            assertSame(leased, request(pool, "k"));
        }
        assertEquals(1, pool.core().leasesForTests().leasesOn("k"), "one lease, reclaimed by each new state");
        assertEquals(1, pool.stats().live());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * The sweep ends leases on the thread every pool's sweeps share; what it gives back is queued
     * and handed to a drainer thread, so no disposer (here, run by a direct executor) runs on it.
     */
    @Test
    void noDisposerRunsOnTheSweepersThread() {
        List<String> disposedOn = new CopyOnWriteArrayList<>();
        RefPool<String, Object> pool = RefPool.builder((String k) -> new Object())
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofMillis(20))
                .executor(Runnable::run)
                .drainThreshold(1)
                .disposer(object -> disposedOn.add(Thread.currentThread().getName()))
                .build();
        pool.core().leasesForTests().leaseAtOnce();
        leasedAndForgotten(pool, "k");
        Awaitility.await("a sweep ended the unused lease and the object was disposed")
                .atMost(Duration.ofSeconds(30))
                .until(() -> !disposedOn.isEmpty());
        assertFalse(disposedOn.get(0).startsWith("refpool-lease-sweeper"), disposedOn::toString);
        pool.close();
        assertEquals(1, disposedOn.size());
    }

    @Test
    void theBuilderRefusesABadPeriodAndChangesNothing() {
        RefPool.Builder<String, String> builder = RefPool.builder((String k) -> k);
        IllegalArgumentException zero =
                assertThrows(IllegalArgumentException.class, () -> builder.threadLeases(Duration.ZERO));
        assertTrue(zero.getMessage().contains("threadLeases"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder.threadLeases(Duration.ofSeconds(-1)));
        assertThrows(NullPointerException.class, () -> builder.threadLeases(null));
        RefPool<String, String> unchanged = builder.build(); // the refusals left no lease set
        assertFalse(unchanged.isClosed());
        assertThrows(IllegalStateException.class, () -> unchanged.core().leasesForTests());
        unchanged.close();
    }
}
