package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Thread leases under faults from the host's callbacks: a disposer that throws, a key whose
 * {@code hashCode} or {@code equals} throws while a lease is looked up, an executor that fails
 * every drainer with an {@code Error}, a listener that throws. After each, every object was given
 * to the disposer exactly once, no lease is left on a closed pool's objects, and the pool still
 * serves.
 */
class ThreadLeasesFaultTest {
    /** A key whose hashCode and equals throw while {@link #failing} is set. */
    static final class Key {
        static final AtomicBoolean failing = new AtomicBoolean();
        final String name;

        Key(String name) {
            this.name = name;
        }

        @Override
        public int hashCode() {
            if (failing.get()) {
                throw new IllegalStateException("hashCode of " + name + " failed");
            }
            return name.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            if (failing.get()) {
                throw new IllegalStateException("equals of " + name + " failed");
            }
            return other instanceof Key k && k.name.equals(name);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private final ConcurrentHashMap<Object, AtomicInteger> disposals = new ConcurrentHashMap<>();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    private RefPool.Builder<Key, Object> builder(boolean disposerThrows) {
        return RefPool.<Key, Object>builder(key -> new Object[] {key})
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .errorListener(errors::add)
                .disposer(object -> {
                    disposals.computeIfAbsent(object, o -> new AtomicInteger()).incrementAndGet();
                    if (disposerThrows) {
                        throw new IllegalStateException("the disposer failed");
                    }
                });
    }

    private static Object request(RefPool<Key, Object> pool, Key key) {
        try (Attachment attached = pool.attach();
                Handle<Object> handle = pool.acquire(key)) {
            return handle.get();
        }
    }

    /** Leases {@code key}'s object, and keeps it live: a handle open while a request leases it. */
    private static void leased(RefPool<Key, Object> pool, Key key) {
        try (Attachment attached = pool.attach()) {
            Handle<Object> first = pool.acquire(key);
            request(pool, key);
            first.close();
        }
    }

    private void assertEachDisposedOnce(int objects) {
        assertEquals(objects, disposals.size(), "objects disposed");
        disposals.forEach((object, count) -> assertEquals(1, count.get(), () -> object + " disposed once"));
    }

    @Test
    void aThrowingDisposerStillDisposesEachLeasedObjectOnce() {
        RefPool<Key, Object> pool = builder(true).build();
        pool.core().leasesForTests().leaseAtOnce();
        Key a = new Key("a");
        Key b = new Key("b");
        Key c = new Key("c");
        request(pool, a);
        request(pool, b);
        request(pool, c);
        assertTrue(pool.invalidate(a)); // the lease is revoked, the object disposed: the disposer throws
        pool.clearIdle(); // b's and c's leases given back, both disposed
        Object again = request(pool, b);
        pool.close();
        assertEachDisposedOnce(4);
        assertTrue(disposals.containsKey(again));
        assertTrue(errors.stream().allMatch(e -> e.kind() == PoolError.Kind.DISPOSER_FAILED), errors::toString);
        assertEquals(4, errors.size(), "each failure reported");
    }

    @Test
    void aKeyThatThrowsWhileItsLeaseIsLookedUpChangesNothing() {
        RefPool<Key, Object> pool = builder(false).build();
        pool.core().leasesForTests().leaseAtOnce();
        Key k = new Key("k");
        Object leased = request(pool, k);
        Key.failing.set(true);
        try {
            assertThrows(IllegalStateException.class, () -> request(pool, k));
            assertThrows(IllegalStateException.class, () -> pool.call(k, object -> object));
        } finally {
            Key.failing.set(false);
        }
        assertSame(leased, request(pool, k), "the lease is intact");
        assertSame(leased, pool.call(k, object -> object));
        assertEquals(1, pool.core().leasesForTests().leasesOn(k));
        pool.close();
        assertEachDisposedOnce(1);
        assertEquals(List.of(), errors);
    }

    @Test
    void aSweepWhoseDrainersFailWithAnErrorLosesNoRelease() {
        AtomicInteger refused = new AtomicInteger();
        RefPool<Key, Object> pool = builder(false)
                .executor(task -> {
                    refused.incrementAndGet();
                    throw new OutOfMemoryError("no drainer for you");
                })
                .drainThreshold(1)
                .idle(cache -> cache.maximumSize(8))
                .build();
        pool.core().leasesForTests().leaseAtOnce();
        Key k = new Key("k");
        Object leased = request(pool, k);
        pool.core().leasesForTests().sweep(); // used since the lease was made: kept
        pool.core().leasesForTests().sweep(); // unused since: its reference goes back as a pending release
        assertEquals(0, pool.core().leasesForTests().leasesOn(k));
        assertTrue(refused.get() > 0, "the drainer was refused");
        pool.flush(); // applied by this thread: the object idles
        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(1, pool.stats().idle());
        assertSame(leased, request(pool, k), "revived from the idle cache");
        pool.close();
        assertEachDisposedOnce(1);
    }

    @Test
    void aThrowingListenerLeavesLeasesAccountedFor() {
        RefPool<Key, Object> pool = RefPool.<Key, Object>builder(key -> new Object[] {key})
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .errorListener(error -> {
                    errors.add(error);
                    throw new IllegalStateException("the listener failed");
                })
                .disposer(object -> {
                    disposals.computeIfAbsent(object, o -> new AtomicInteger()).incrementAndGet();
                    throw new IllegalStateException("the disposer failed");
                })
                .build();
        pool.core().leasesForTests().leaseAtOnce();
        Key k = new Key("k");
        request(pool, k);
        assertTrue(pool.invalidate(k));
        request(pool, k);
        pool.close();
        assertEachDisposedOnce(2);
        assertEquals(2, errors.size(), "each disposer failure reached the listener");
    }

    /**
     * A bounded pool whose disposer throws: each lease the capacity line ends still frees its
     * permit (the disposer's failure is reported, the permit comes back), so every creation and
     * waiter is served and nothing is left held.
     */
    @Test
    void leasesEndedForCapacityFreeTheirPermitsThoughTheDisposerThrows() throws Exception {
        RefPool<Key, Object> pool = builder(true).maxObjects(1).build();
        pool.core().leasesForTests().leaseAtOnce();
        Key a = new Key("a");
        Key b = new Key("b");
        leased(pool, a); // holds the only permit
        request(pool, b); // a's lease ends for b's creation (a's disposer throws, its permit comes back)
        pool.core().leasesForTests().resumeLeasing(); // the pause that followed, ended
        leased(pool, b); // b was disposed at zero (the disposer throws): made again, and leased
        Handle<Object> heldB;
        try (Attachment attached = pool.attach()) {
            heldB = pool.acquire(b); // borrowed from b's lease
        }
        CompletableFuture<Handle<Object>> waiter =
                pool.acquireAsync(a, CancellationToken.none()).toCompletableFuture();
        assertFalse(waiter.isDone(), "b is in use: a waits in line");
        try (Attachment attached = pool.attach()) {
            heldB.close(); // the line ended b's lease: disposed (the disposer throws), a created with its permit
        }
        Handle<Object> servedA = waiter.get(20, TimeUnit.SECONDS);
        try (Attachment attached = pool.attach()) {
            servedA.close();
        }
        Object fresh = request(pool, a); // a was disposed at zero (no idle cache): made anew
        pool.close();
        assertEachDisposedOnce(5);
        assertTrue(disposals.containsKey(fresh));
        assertTrue(
                errors.stream()
                        .noneMatch(e -> e.kind() == PoolError.Kind.HANDLES_OPEN_AT_CLOSE
                                || e.kind() == PoolError.Kind.REFCOUNT_DOUBLE_RELEASE),
                errors::toString);
        assertEquals(
                5,
                errors.stream()
                        .filter(e -> e.kind() == PoolError.Kind.DISPOSER_FAILED)
                        .count(),
                errors::toString);
    }
}
