package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Thread leases in a pool with {@code maxObjects}, a validator or {@code maxLifetime}: a lease never
 * holds capacity a creation or a waiter in line needs, and a leased object is still checked. The
 * forced race: a lease made while an acquirer joins the line for capacity.
 */
class ThreadLeasesWithBoundsTest {
    private static final Duration LONG = Duration.ofSeconds(20);

    private final TestResources resources = new TestResources();

    /** Sweeps run by hand (a sweep period of an hour), every thread leases from its first acquire. */
    private RefPool<String, Resource> leasing(RefPool.Builder<String, Resource> builder) {
        return leasing(resources, builder);
    }

    /** {@code builder}'s pool, {@code SHARED}, its sweeps run by hand, leasing from the first acquire. */
    static RefPool<String, Resource> leasing(TestResources resources, RefPool.Builder<String, Resource> builder) {
        RefPool<String, Resource> pool = resources.build(builder.attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .drainDelay(Duration.ofHours(1)));
        pool.core().leasesForTests().leaseAtOnce();
        return pool;
    }

    static Resource request(RefPool<String, Resource> pool, String key) {
        try (Attachment attached = pool.attach();
                Handle<Resource> handle = pool.acquire(key)) {
            return handle.get();
        }
    }

    /**
     * {@return the object of {@code key}, leased by this thread, and borrowed by nothing}: a handle
     * made first keeps the object live while a request leases it (or borrows its lease).
     */
    private static Resource leased(RefPool<String, Resource> pool, String key) {
        Handle<Resource> first;
        try (Attachment attached = pool.attach()) {
            first = pool.acquire(key);
        }
        Resource resource = request(pool, key);
        closeAttached(pool, first);
        return resource;
    }

    private static void closeAttached(RefPool<String, Resource> pool, Handle<Resource> handle) {
        try (Attachment attached = pool.attach()) {
            handle.close();
        }
    }

    @Test
    void aCreationShortOfCapacityEndsLeasesThatLendNothingThenLeasingPauses() {
        for (boolean cached : new boolean[] {false, true}) {
            RefPool.Builder<String, Resource> builder = resources.builder().maxObjects(1);
            if (cached) {
                builder.idle(cache -> cache.maximumSize(4));
            }
            RefPool<String, Resource> pool = leasing(builder);
            Resource a = request(pool, "a");
            assertEquals(1, pool.core().leasesForTests().leasesOn("a"), "a is leased, its permit held");
            Resource b = request(pool, "b"); // the only permit is a's: its lease ends, a is disposed
            assertEquals(1, a.disposals.get(), "cached=" + cached + ": a's lease ended for b's creation");
            assertEquals(0, pool.core().leasesForTests().leasesOn("b"), "no lease while leasing pauses");
            if (cached) {
                assertSame(b, request(pool, "b"), "idle in the cache, revived");
            }
            pool.core().leasesForTests().resumeLeasing();
            Resource again = request(pool, "b");
            assertEquals(1, pool.core().leasesForTests().leasesOn("b"), "leased once the pause ended");
            assertSame(again, request(pool, "b"));
            pool.close();
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void theSweepAfterAPauseLetsThreadsLeaseAgain() {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .maxObjects(1)
                .idle(cache -> cache.maximumSize(4))
                .threadLeases(Duration.ofMillis(20))); // the real sweeper
        pool.core().leasesForTests().leaseAtOnce();
        request(pool, "a");
        request(pool, "b"); // a's lease ends for b's creation: leasing pauses
        Awaitility.await("a sweep ended the pause; b is leased again")
                .atMost(LONG)
                .until(() -> {
                    request(pool, "b");
                    return pool.core().leasesForTests().leasesOn("b") == 1;
                });
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aLeaseInUseEndsForTheLineWhenItsHandleCloses() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().maxObjects(1));
        Resource a = leased(pool, "a");
        CompletableFuture<Handle<Resource>> b;
        try (Attachment attached = pool.attach()) {
            Handle<Resource> held = pool.acquire("a"); // borrowed from the lease: a is in use
            b = pool.acquireAsync("b", CancellationToken.none()).toCompletableFuture();
            assertFalse(b.isDone(), "a is in use: b waits in line");
            held.close(); // the line ended a's lease: its last borrow ends it, a is disposed for b
        }
        Handle<Resource> handle = b.get(LONG.toSeconds(), TimeUnit.SECONDS);
        assertEquals(1, a.disposals.get());
        assertEquals(0, pool.core().leasesForTests().leasesOn("a"));
        closeAttached(pool, handle);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aRequestWhileAnAcquirerWaitsInLineLeavesNoLease() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().maxObjects(1));
        Handle<Resource> held = pool.acquireAsync("a", CancellationToken.none())
                .toCompletableFuture()
                .join(); // a handle of its own
        CompletableFuture<Handle<Resource>> b =
                pool.acquireAsync("b", CancellationToken.none()).toCompletableFuture();
        assertFalse(b.isDone());
        pool.core().leasesForTests().resumeLeasing(); // joining the line paused leasing: only the line stops it now
        Resource a = fork("requester", () -> request(pool, "a")).join();
        assertSame(held.get(), a);
        assertEquals(0, pool.core().leasesForTests().leasesOn("a"), "b waits: the request's reference went back");
        closeAttached(pool, held);
        Handle<Resource> handle = b.get(LONG.toSeconds(), TimeUnit.SECONDS);
        closeAttached(pool, handle);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * The race: a request's reference is about to become a lease (it passed the check for waiters)
     * when an acquirer joins the line and ends every lease, finding none on the object. The lease
     * made after that must end at the request's close; kept, it would hold the only permit until a
     * sweep, an hour away, and the waiter would wait that long.
     */
    @Test
    void aLeaseMadeAsAnAcquirerJoinsTheLineEndsAtItsClose() throws Exception {
        RefPool<String, Resource> pool = leasing(resources.builder().maxObjects(1));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Forked<Void> requester = unstartedRun("requester", () -> request(pool, "a"));
        PointPauses.Pause making = hooks.pause(Point.LEASE_MAKING, requester.thread);
        requester.start();
        making.awaitArrival(); // holds a's reference, and the only permit
        CompletableFuture<Handle<Resource>> b =
                pool.acquireAsync("b", CancellationToken.none()).toCompletableFuture();
        assertFalse(b.isDone(), "the only permit is a's");
        assertEquals(1, pool.stats().capacityWaiters());
        making.proceed();
        requester.join();
        Handle<Resource> handle = b.get(LONG.toSeconds(), TimeUnit.SECONDS);
        assertEquals(0, pool.core().leasesForTests().leasesOn("a"));
        closeAttached(pool, handle);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSweepEndsALeaseInUseSoTheValidatorChecksItsObjectAgain() {
        AtomicBoolean valid = new AtomicBoolean(true);
        RefPool<String, Resource> pool = leasing(
                resources.builder().idle(cache -> cache.maximumSize(4)).validator((key, resource) -> valid.get()));
        Resource first = request(pool, "k");
        valid.set(false);
        assertSame(first, request(pool, "k"), "borrowed from the lease: not revived, not checked");
        pool.core().leasesForTests().sweep(); // the lease was used since it was made: ended all the same
        pool.flush();
        assertEquals(0, pool.core().leasesForTests().leasesOn("k"));
        valid.set(true);
        Resource checked = request(pool, "k");
        assertSame(first, checked, "revived and checked: valid again");
        valid.set(false);
        pool.core().leasesForTests().sweep();
        pool.flush();
        Resource fresh = request(pool, "k");
        assertNotSame(first, fresh, "the revive check refused the old object");
        assertEquals(1, first.disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * The sweeper ends a lease of a thread that stays attached and only queues the release; the
     * thread acquires the object again before that release is applied. It must not lease the object
     * anew (the count would never reach zero, and no check would run): the object is due a check,
     * and the revive after the thread detaches runs the validator.
     */
    @Test
    void aThreadThatStaysAttachedDoesNotReleaseAnObjectDueACheck() {
        AtomicBoolean valid = new AtomicBoolean(true);
        RefPool<String, Resource> pool = leasing(
                resources.builder().idle(cache -> cache.maximumSize(4)).validator((key, resource) -> valid.get()));
        Resource first;
        try (Attachment attached = pool.attach()) {
            first = request(pool, "k"); // leased
            valid.set(false);
            pool.core().leasesForTests().sweepAsSweeper(); // the lease ends, its release queued
            try (Handle<Resource> again = pool.acquire("k")) { // no attach: the release stays queued
                assertSame(first, again.get(), "live: retained, not checked");
            }
            assertEquals(0, pool.core().leasesForTests().leasesOn("k"), "due a check: not leased again");
        } // the queued release is applied: zero, idle
        Resource fresh = request(pool, "k");
        assertNotSame(first, fresh, "revived, checked, refused");
        assertEquals(1, first.disposals.get());
        valid.set(true);
        assertSame(fresh, request(pool, "k"));
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * The race: another thread leases the object while a sweep of a checked pool lists its leases.
     * The sweep ends what it listed; a lease made after the listing and before the object was
     * marked due its check escaped it, and kept the object from zero, and from its check, for
     * another period. The listing and the mark are now one step, so the lease is refused.
     */
    @Test
    void aLeaseMadeWhileASweepListsTheObjectsLeasesIsRefused() throws Exception {
        RefPool<String, Resource> pool =
                leasing(resources.builder().idle(cache -> cache.maximumSize(4)).validator((key, resource) -> true));
        request(pool, "k"); // leased by this thread
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Forked<Void> sweeper =
                unstartedRun("sweeper", () -> pool.core().leasesForTests().sweep());
        PointPauses.Pause listed = hooks.pause(Point.SWEEP_LISTED, sweeper.thread);
        sweeper.start();
        listed.awaitArrival();
        Forked<Resource> other = fork("other", () -> request(pool, "k"));
        other.join(); // its acquire found the object live, and its thread would lease it
        listed.proceed();
        sweeper.join();
        assertEquals(0, pool.core().leasesForTests().leasesOn("k"), "a lease escaped the sweep");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aLeasedObjectPastItsLifetimeRetiresAtTheNextSweep() {
        AtomicLong now = new AtomicLong();
        RefPool<String, Resource> pool =
                leasing(resources.builder().ticker(now::get).maxLifetime(Duration.ofMinutes(1)));
        Resource first = request(pool, "k");
        now.addAndGet(Duration.ofMinutes(2).toNanos());
        assertSame(first, request(pool, "k"), "in use by its lease: never retired under it");
        pool.core().leasesForTests().sweep();
        pool.flush(); // the lease's reference goes back: zero, past its lifetime
        assertEquals(1, first.disposals.get(), "retired at zero");
        Resource fresh = request(pool, "k");
        assertNotSame(first, fresh);
        assertTrue(pool.core().leasesForTests().leasesOn("k") == 1);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
