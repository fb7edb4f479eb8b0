package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Leak detection: under {@code PARANOID} every handle that becomes unreachable while open is
 * released through the deferred queue and reported with its acquisition site; under
 * {@code SAMPLED} a sample is; under {@code OFF} (the default) none is. Close reports the handles
 * still open, and {@code PARANOID} reports a double close with the first close's site.
 */
class LeakDetectionTest {
    private static final int DROPPED = 1_000;
    private static final Duration NUDGE = Duration.ofMillis(50);

    private static RefPool<String, Session> pool(Engine engine, LeakDetection mode) {
        return engine.build(engine.builder().leakDetection(mode).drainDelay(Duration.ofMillis(10)));
    }

    /** Acquires {@code count} handles over {@code keys} keys and drops them unclosed. */
    private static void dropHandles(RefPool<String, Session> pool, int count, int keys) {
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < count; i++) {
                pool.acquire("k" + (i % keys));
            }
        }
    }

    /** Waits (bounded) for {@code leaks} reports, nudging the collector between polls. */
    private static void awaitLeaksReleased(RefPool<String, Session> pool, long leaks) {
        eventually().pollInterval(NUDGE).until(() -> {
            System.gc();
            PoolStats stats = pool.stats();
            return stats.leaks() == leaks && stats.pendingDecrements() == 0 && stats.live() == 0;
        });
    }

    private static boolean siteMentions(Throwable site, String method) {
        return Arrays.stream(site.getStackTrace())
                .anyMatch(frame -> frame.getMethodName().equals(method));
    }

    @Test
    void paranoidReleasesAndReportsEveryDroppedHandleWithItsSite() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, LeakDetection.PARANOID);
        dropHandles(pool, DROPPED, 10);
        assertEquals(10, pool.stats().live());

        awaitLeaksReleased(pool, DROPPED);

        List<PoolError> leaks = engine.errors(PoolError.Kind.HANDLE_LEAKED);
        assertEquals(DROPPED, leaks.size());
        for (PoolError leak : leaks) {
            assertNotNull(leak.cause(), "the acquisition site");
            assertTrue(siteMentions(leak.cause(), "dropHandles"), "the site is where the handle was acquired");
            assertTrue(leak.message().contains("'" + leak.key() + "'"), leak.message());
        }
        engine.awaitAllDisposedExactlyOnce(); // the last leak of each key disposed it, attached
        assertEquals(10, pool.stats().disposals());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    /**
     * A leak's release due at once (past the drain threshold), with an executor that refuses the
     * drain: the drain runs on a thread of the library's own, not on the leak detector's thread,
     * which every pool shares. Before, the refused drain ran there, and with it the disposer.
     */
    @Test
    void aLeaksDrainRefusedByTheExecutorNeverRunsOnTheLeakDetectorsThread() {
        Engine engine = new Engine();
        List<String> disposedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        engine.afterDispose = session -> disposedOn.add(Thread.currentThread().getName());
        RefPool<String, Session> pool = engine.build(engine.builder()
                .leakDetection(LeakDetection.PARANOID)
                .drainThreshold(1)
                .executor(task -> {
                    throw new java.util.concurrent.RejectedExecutionException("refuses every drain");
                })
                .errorListener(error -> {}));
        dropHandles(pool, 1, 1);
        awaitLeaksReleased(pool, 1);
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(1, disposedOn.size());
        assertFalse(disposedOn.get(0).equals("refpool-leak-detector"), "disposed on " + disposedOn);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aLeakedHandleReleasesOnlyItsOwnReference() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, LeakDetection.PARANOID);
        Handle<Session> keeper;
        try (Attachment attached = pool.attach()) {
            keeper = pool.acquire("k0");
        }
        keeper.get().openHandles.incrementAndGet();
        dropHandles(pool, DROPPED, 1);
        eventually().pollInterval(NUDGE).until(() -> {
            System.gc();
            return pool.stats().leaks() == DROPPED && pool.stats().pendingDecrements() == 0;
        });
        assertEquals(1, pool.stats().live(), "the keeper's reference is left");
        assertFalse(keeper.get().isDisposed());
        keeper.get().openHandles.decrementAndGet();
        try (Attachment attached = pool.attach()) {
            keeper.close();
        }
        assertEquals(DROPPED, engine.errors(PoolError.Kind.HANDLE_LEAKED).size());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void closedHandlesAreNeverReportedAsLeaks() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, LeakDetection.PARANOID);
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < DROPPED; i++) {
                pool.acquire("k" + (i % 10)).close();
            }
        }
        dropHandles(pool, 1, 1); // a sentinel that does leak
        awaitLeaksReleased(pool, 1);
        assertEquals(1, engine.errors(PoolError.Kind.HANDLE_LEAKED).size());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void sampledDetectionTracksASampleOfHandles() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, LeakDetection.SAMPLED);
        int dropped = 4 * DROPPED;
        dropHandles(pool, dropped, 1);
        eventually().pollInterval(NUDGE).until(() -> {
            System.gc();
            return pool.stats().leaks() > 0 && pool.stats().pendingDecrements() == 0;
        });
        long reported = pool.stats().leaks();
        assertTrue(reported < dropped / 10, reported + " of " + dropped + " handles were tracked");
        assertEquals(1, pool.stats().live(), "untracked leaks keep their object alive");
        for (PoolError leak : engine.errors(PoolError.Kind.HANDLE_LEAKED)) {
            assertTrue(siteMentions(leak.cause(), "dropHandles"));
        }
        pool.close();
    }

    @Test
    void aSamplingRateOfOneTracksEveryHandle() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .leakDetection(LeakDetection.SAMPLED)
                .leakSamplingRate(1)
                .drainDelay(Duration.ofMillis(10)));
        dropHandles(pool, 20, 2);
        awaitLeaksReleased(pool, 20);
        assertEquals(20, engine.errors(PoolError.Kind.HANDLE_LEAKED).size(), "every handle was tracked");
        assertEquals(0, pool.stats().live(), "every leaked reference was released for its handle");
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void closeReportsOpenHandlesWithTheirSitesUnderParanoid() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, LeakDetection.PARANOID);
        List<Handle<Session>> open = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            open.add(pool.acquire("a"));
            open.add(pool.acquire("a"));
            open.add(pool.acquire("b"));
        }
        pool.close();

        List<PoolError> reports = engine.errors(PoolError.Kind.HANDLES_OPEN_AT_CLOSE);
        assertEquals(4, reports.size(), "a summary and one report per tracked handle: " + reports);
        PoolError summary = reports.get(0);
        assertNull(summary.cause());
        assertTrue(summary.message().startsWith("3 reference(s) still held"), summary.message());
        assertTrue(summary.message().contains("'a' (2)"), summary.message());
        for (PoolError report : reports.subList(1, 4)) {
            assertTrue(siteMentions(report.cause(), "closeReportsOpenHandlesWithTheirSitesUnderParanoid"));
        }
        open.forEach(Handle::close); // after close, off-attachment: the drainer disposes them
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void leakDetectionIsOffByDefaultAndCloseStillReportsOpenHandles() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        Handle<Session> open;
        try (Attachment attached = pool.attach()) {
            open = pool.acquire("a");
        }
        pool.close();
        List<PoolError> reports = engine.errors(PoolError.Kind.HANDLES_OPEN_AT_CLOSE);
        assertEquals(1, reports.size(), "only the summary: no handle is tracked by default");
        assertNull(reports.get(0).cause());
        assertFalse(open.get().isDisposed(), "live objects outlive the pool's close");
        open.close(); // off-attachment, after close: the drainer disposes it
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void paranoidReportsADoubleCloseWithTheFirstClosesSite() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, LeakDetection.PARANOID);
        try (Attachment attached = pool.attach();
                Handle<Session> keeper = pool.acquire("k")) {
            Handle<Session> twice = keeper.share();
            closeFirst(twice);
            twice.close();
            assertEquals(1, pool.stats().live(), "the second close did not decrement");
            assertFalse(keeper.get().isDisposed());
        }
        List<PoolError> reports = engine.errors(PoolError.Kind.HANDLE_CLOSED_TWICE);
        assertEquals(1, reports.size());
        Throwable secondClose = reports.get(0).cause();
        assertTrue(siteMentions(secondClose, "paranoidReportsADoubleCloseWithTheFirstClosesSite"));
        assertNotNull(secondClose.getCause(), "the first close's site");
        assertTrue(siteMentions(secondClose.getCause(), "closeFirst"));
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aSecondCloseRunsTheListenerAndTheKeysToStringOutsideTheHandlesLock() {
        List<Handle<?>> handle = new CopyOnWriteArrayList<>();
        List<String> underTheLock = new CopyOnWriteArrayList<>();
        Object key = new Object() {
            @Override
            public String toString() {
                if (!handle.isEmpty() && Thread.holdsLock(handle.get(0))) {
                    underTheLock.add("the key's toString");
                }
                return "key";
            }
        };
        RefPool<Object, Object> pool = RefPool.builder((Object k) -> new Object())
                .leakDetection(LeakDetection.PARANOID)
                .errorListener(error -> {
                    if (Thread.holdsLock(handle.get(0))) {
                        underTheLock.add("the listener, told of " + error.kind());
                    }
                })
                .build();
        try (Attachment attached = pool.attach()) {
            handle.add(pool.acquire(key));
            handle.get(0).close();
            handle.get(0).close();
        }
        assertEquals(List.of(), underTheLock, "user code ran under the handle's lock");
        pool.close();
    }

    private static void closeFirst(Handle<Session> handle) {
        handle.close();
    }

    /** A key whose {@code toString} stops on one thread until let go. */
    private static final class SlowKey {
        final CountDownLatch stopped = new CountDownLatch(1);
        final CountDownLatch goOn = new CountDownLatch(1);
        volatile Thread stopsOn;

        @Override
        public String toString() {
            if (Thread.currentThread() == stopsOn) {
                stopsOn = null;
                stopped.countDown();
                TestKeyedPoolFixtures.awaitLatch(goOn);
            }
            return "slow";
        }
    }

    /**
     * Two threads close one handle at once: the second close's report carries the first close's
     * site even while the first is still running. Before, the site was recorded after the handle
     * read as closed, naming the key (whose {@code toString} stops here) on the way.
     */
    @Test
    void aSecondCloseDuringTheFirstIsReportedWithTheFirstClosesSite() throws Exception {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        SlowKey key = new SlowKey();
        RefPool<SlowKey, Object> pool = RefPool.<SlowKey, Object>builder(k -> new Object())
                .leakDetection(LeakDetection.PARANOID)
                .errorListener(errors::add)
                .build();
        Handle<Object> handle = pool.attached(() -> pool.acquire(key));
        Forked<Void> first = unstartedRun("first-closer", handle::close);
        key.stopsOn = first.thread;
        first.start();
        eventually().until(() -> key.stopped.getCount() == 0 || !first.thread.isAlive());
        forkRun("second-closer", handle::close).join();
        key.goOn.countDown();
        first.join();
        List<PoolError> twice = errors.stream()
                .filter(e -> e.kind() == PoolError.Kind.HANDLE_CLOSED_TWICE)
                .toList();
        assertEquals(1, twice.size(), errors.toString());
        assertNotNull(twice.get(0).cause(), "the report carries the first close's site: " + twice.get(0));
        assertEquals(
                "the handle for key 'slow' was first closed here",
                twice.get(0).cause().getCause().getMessage());
        pool.flush();
        assertEquals(0, pool.stats().live(), "one release");
        pool.close();
    }
}
