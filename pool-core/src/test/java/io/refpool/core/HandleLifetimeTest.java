package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Handle lifetime: closes on odd threads and at odd times, leaks, double closes, races of invalidations. */
class HandleLifetimeTest {
    private static void await(CountDownLatch latch) {
        TestKeyedPoolFixtures.awaitLatch(latch);
    }

    /** Collects garbage until the leak detector has released {@code obj}'s dropped handle and it was disposed. */
    private static void collectUntilDisposed(Host host, Obj obj) {
        eventually().pollInterval(Duration.ofMillis(20)).until(() -> {
            System.gc();
            return !host.of(obj).isEmpty();
        });
    }

    /** Objects that remember each disposal: its cause, and whether it ran attached. */
    static final class Host {
        final List<PoolError> errors = new CopyOnWriteArrayList<>();
        final Map<Obj, List<String>> disposals = new ConcurrentHashMap<>();
        final List<Obj> created = new CopyOnWriteArrayList<>();
        volatile RefPool<String, Obj> pool;

        RefPool.Builder<String, Obj> builder() {
            return RefPool.<String, Obj>builder(key -> {
                        Obj o = new Obj(key);
                        created.add(o);
                        return o;
                    })
                    .attachMode(AttachMode.SHARED)
                    .errorListener(errors::add)
                    .disposer((String key, Obj value, DisposalCause cause) -> disposals
                            .computeIfAbsent(value, v -> new CopyOnWriteArrayList<>())
                            .add(cause + (pool.isAttached() ? "" : " DETACHED")));
        }

        /** A {@code SHARED} builder whose leak detector tracks every handle. */
        RefPool.Builder<String, Obj> paranoid() {
            return builder().leakDetection(LeakDetection.PARANOID);
        }

        RefPool<String, Obj> build(RefPool.Builder<String, Obj> builder) {
            pool = builder.build();
            return pool;
        }

        List<String> of(Obj o) {
            return disposals.getOrDefault(o, List.of());
        }

        void assertEachDisposedOnceAttached() {
            for (Obj o : created) {
                assertEquals(1, of(o).size(), o + ": " + of(o));
                assertFalse(of(o).get(0).endsWith("DETACHED"), o + ": " + of(o));
            }
        }

        List<PoolError> errors(PoolError.Kind kind) {
            List<PoolError> out = new ArrayList<>();
            for (PoolError e : errors) {
                if (e.kind() == kind) {
                    out.add(e);
                }
            }
            return out;
        }
    }

    static final class Obj {
        final String key;

        Obj(String key) {
            this.key = key;
        }

        @Override
        public String toString() {
            return "Obj[" + key + "@" + Integer.toHexString(System.identityHashCode(this)) + "]";
        }
    }

    // ---------------------------------------------------------------- closes at odd times

    @Test
    void aHandleClosedDetachedAfterThePoolClosedDisposesItsObjectOnceAttached() throws Exception {
        Host host = new Host();
        RefPool<String, Obj> pool = host.build(host.builder().drainDelay(Duration.ofHours(1)));
        Handle<Obj> handle = pool.attached(() -> pool.acquire("a"));
        Obj obj = handle.get();
        pool.close();
        assertEquals(1, host.errors(PoolError.Kind.HANDLES_OPEN_AT_CLOSE).size());
        assertEquals(obj, handle.get(), "a handle open at close stays usable");
        assertThrows(PoolClosedException.class, () -> handle.call(o -> o));
        assertThrows(PoolClosedException.class, handle::invalidate);
        forkRun("closer", handle::close).join(); // detached: pending; after close the drain is urgent
        eventually().until(() -> !host.of(obj).isEmpty());
        assertEquals(List.of("CLOSED"), host.of(obj));
        PoolStats stats = pool.stats();
        assertEquals(0, stats.live());
        assertEquals(0, stats.pendingDecrements());
        assertEquals(1, stats.disposals());
        IllegalStateException e = assertThrows(IllegalStateException.class, handle::get);
        assertTrue(e.getMessage().contains("'a'") && e.getMessage().contains("closed"), e.getMessage());
        host.assertEachDisposedOnceAttached();
    }

    @Test
    void aHandleClosedDetachedWhileTheCloseWaitsForAnAttachedThreadIsDisposedOnce() throws Exception {
        Host host = new Host();
        RefPool<String, Obj> pool =
                host.build(host.builder().drainDelay(Duration.ofHours(1)).idle(cache -> cache.maximumSize(10)
                        .executor(Runnable::run)));
        Handle<Obj> handle = pool.attached(() -> pool.acquire("a"));
        Obj obj = handle.get();
        CountDownLatch attached = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        TestKit.Forked<Void> holder = forkRun("holder", () -> {
            try (Attachment a = pool.attach()) {
                attached.countDown();
                await(leave);
            }
        });
        await(attached);
        TestKit.Forked<Void> closer = forkRun("closer", pool::close);
        eventually().until(pool::isClosed); // CLOSING: waits for the holder to leave
        TestKit.awaitParked(closer.thread);
        handle.close(); // detached, while closing
        assertTrue(host.of(obj).isEmpty());
        leave.countDown();
        holder.join();
        closer.join();
        eventually().until(() -> !host.of(obj).isEmpty());
        assertEquals(List.of("CLOSED"), host.of(obj));
        assertEquals(0, pool.stats().live());
        assertEquals(0, pool.stats().pendingDecrements());
        host.assertEachDisposedOnceAttached();
        assertEquals(List.of(), host.errors);
    }

    @Test
    void twoThreadsClosingOneHandleAtOnceReleaseItOnce() throws Exception {
        Host host = new Host();
        RefPool<String, Obj> pool = host.build(host.paranoid().drainDelay(Duration.ofHours(1)));
        Handle<Obj> keeper = pool.attached(() -> pool.acquire("a"));
        int rounds = 2_000;
        for (int i = 0; i < rounds; i++) {
            Handle<Obj> h = keeper.share();
            CyclicBarrier start = new CyclicBarrier(2);
            boolean attachedSide = (i & 1) == 0;
            TestKit.Forked<Void> other = forkRun("other", () -> {
                start.await();
                h.close(); // detached
            });
            if (attachedSide) {
                try (Attachment a = pool.attach()) {
                    start.await();
                    h.close();
                }
            } else {
                start.await();
                h.close();
            }
            other.join();
        }
        pool.flush();
        PoolStats stats = pool.stats();
        assertEquals(1, stats.live(), "only the keeper's reference is left");
        assertEquals(0, stats.pendingDecrements());
        assertEquals(0, stats.disposals());
        assertEquals(rounds, host.errors(PoolError.Kind.HANDLE_CLOSED_TWICE).size());
        assertEquals(0, host.errors(PoolError.Kind.REFCOUNT_DOUBLE_RELEASE).size());
        pool.attached(() -> {
            keeper.close();
            return null;
        });
        assertEquals(1, pool.stats().disposals());
        pool.close();
        host.assertEachDisposedOnceAttached();
    }

    // ---------------------------------------------------------------- leaks

    private static void dropHandle(RefPool<String, Obj> pool, String key) {
        pool.attached(() -> pool.acquire(key)); // never closed, unreachable on return
    }

    @Test
    void aHandleLeakedAfterThePoolClosedIsReleasedReportedAndDisposedOnceAttached() {
        Host host = new Host();
        RefPool<String, Obj> pool = host.build(host.paranoid().drainDelay(Duration.ofHours(1)));
        dropHandle(pool, "a");
        Obj obj = host.created.get(0);
        pool.close(); // the handle is open, and unreachable
        collectUntilDisposed(host, obj);
        assertEquals(List.of("CLOSED"), host.of(obj));
        assertEquals(1, pool.stats().leaks());
        assertEquals(0, pool.stats().live());
        assertEquals(0, pool.stats().pendingDecrements());
        // the leak's release is queued before it is reported: the drain may dispose first
        eventually().until(() -> host.errors(PoolError.Kind.HANDLE_LEAKED).size() == 1);
        host.assertEachDisposedOnceAttached();
    }

    @Test
    void aLeakedHandleOfAnInvalidatedObjectDisposesItOnceAsInvalidated() {
        Host host = new Host();
        RefPool<String, Obj> pool = host.build(host.paranoid()
                .idle(cache -> cache.maximumSize(10).executor(Runnable::run))
                .drainDelay(Duration.ofMillis(10)));
        dropHandle(pool, "a");
        Obj obj = host.created.get(0);
        assertTrue(pool.invalidate("a"));
        collectUntilDisposed(host, obj);
        assertEquals(List.of("INVALIDATED"), host.of(obj));
        assertEquals(1, pool.stats().leaks());
        assertEquals(1, pool.stats().disposals(DisposalCause.INVALIDATED));
        assertFalse(pool.invalidate("a"));
        pool.close();
        host.assertEachDisposedOnceAttached();
    }

    @Test
    void closedThenCollectedHandlesAreNeitherReleasedAgainNorReported() {
        Host host = new Host();
        RefPool<String, Obj> pool = host.build(host.paranoid().drainDelay(Duration.ofMillis(10)));
        Handle<Obj> keeper = pool.attached(() -> pool.acquire("a"));
        for (int i = 0; i < 500; i++) {
            Handle<Obj> h = keeper.share();
            if ((i & 1) == 0) {
                h.close(); // detached
            } else {
                pool.attached(() -> {
                    h.close();
                    return null;
                });
            }
        }
        dropHandle(pool, "sentinel");
        eventually().pollInterval(Duration.ofMillis(20)).until(() -> {
            System.gc();
            return pool.stats().leaks() == 1
                    && pool.stats().pendingDecrements() == 0
                    && pool.stats().live() == 1
                    && host.errors(PoolError.Kind.HANDLE_LEAKED).size() == 1; // reported after the release
        });
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        pool.flush();
        assertEquals(1, pool.stats().live(), "the keeper's reference");
        assertEquals(0, host.errors(PoolError.Kind.REFCOUNT_DOUBLE_RELEASE).size());
        assertEquals(1, host.errors(PoolError.Kind.HANDLE_LEAKED).size());
        pool.attached(() -> {
            keeper.close();
            return null;
        });
        pool.close();
        host.assertEachDisposedOnceAttached();
    }

    // ---------------------------------------------------------------- invalidations racing

    @Test
    void concurrentInvalidationsOfOneObjectReturnTrueExactlyOnce() throws Exception {
        Host host = new Host();
        RefPool<String, Obj> pool = host.build(host.builder()
                .idle(cache -> cache.maximumSize(10).executor(Runnable::run))
                .drainDelay(Duration.ofHours(1)));
        int rounds = 500;
        for (int i = 0; i < rounds; i++) {
            boolean idle = (i % 3) == 0;
            Handle<Obj> h1 = pool.attached(() -> pool.acquire("k"));
            Handle<Obj> h2 = h1.share();
            if (idle) {
                pool.attached(() -> {
                    h1.close();
                    h2.close();
                    return null;
                });
            }
            CyclicBarrier start = new CyclicBarrier(3);
            AtomicInteger wins = new AtomicInteger();
            Obj obj = host.created.get(host.created.size() - 1);
            TestKit.Forked<Void> a = forkRun("a", () -> {
                start.await();
                if (idle ? pool.invalidate("k") : h1.invalidate()) wins.incrementAndGet();
            });
            TestKit.Forked<Void> b = forkRun("b", () -> {
                start.await();
                if (idle ? pool.invalidate("k", obj) : h2.invalidate()) wins.incrementAndGet();
            });
            start.await();
            if (pool.invalidate("k")) wins.incrementAndGet();
            a.join();
            b.join();
            assertEquals(1, wins.get(), "round " + i);
            if (!idle) {
                pool.attached(() -> {
                    h1.close();
                    h2.close();
                    return null;
                });
            }
            assertEquals(1, host.of(obj).size(), obj + " " + host.of(obj));
        }
        pool.close();
        host.assertEachDisposedOnceAttached();
        assertEquals(List.of(), host.errors);
    }
}
