package io.refpool.core;

import static io.refpool.core.TestKeyedPoolFixtures.awaitLatch;
import static io.refpool.core.TestKeyedPoolFixtures.onOtherThread;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * Stats: each counter moves as documented; and the pool's JFR events ({@code io.refpool.Drain},
 * {@code io.refpool.AttachWait}, {@code io.refpool.Leak}) are recorded.
 */
class PoolStatsTest {
    /** A map that gives a cause a null count reads as zero for it, not as a failure at the read. */
    @Test
    void aCauseMappedToNullCountsZero() {
        Map<EvictionCause, Long> evictions = new HashMap<>();
        evictions.put(EvictionCause.SIZE, null);
        evictions.put(EvictionCause.EXPIRED, 2L);
        Map<DisposalCause, Long> disposals = new HashMap<>();
        disposals.put(DisposalCause.CLOSED, null);
        PoolStats stats = new PoolStats(0, 0, 0, 0, 0, 0, evictions, 0, 0, 0, disposals, 0, 0);
        assertEquals(0, stats.evictions(EvictionCause.SIZE));
        assertEquals(2, stats.evictions());
        assertEquals(0, stats.disposals(DisposalCause.CLOSED));
    }

    @Test
    void liveIdleCreationsIdleHitsAndDisposalsMoveAsDocumented() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().idle(cache -> cache.maximumSize(10)));
        PoolStats empty = pool.stats();
        assertEquals(0, empty.live() + empty.idle() + empty.creations() + empty.disposals() + empty.idleHits());
        try (Attachment attached = pool.attach()) {
            Handle<Session> a = pool.acquire("a");
            Handle<Session> a2 = pool.acquire("a");
            Handle<Session> b = pool.acquire("b");
            assertStats(pool, "live 2, idle 0, creations 2", 2, 0, 2, 0, 0);
            a.close();
            assertStats(pool, "one of two handles of 'a' closed", 2, 0, 2, 0, 0);
            a2.close();
            assertStats(pool, "'a' idles", 1, 1, 2, 0, 0);
            pool.acquire("a").close();
            assertStats(pool, "'a' revived and idled again: one idle hit", 1, 1, 2, 0, 1);
            b.close();
            assertStats(pool, "both idle", 0, 2, 2, 0, 1);
        }
        pool.close();
        assertStats(pool, "close disposed both", 0, 0, 2, 2, 1);
    }

    private static void assertStats(
            RefPool<String, Session> pool,
            String when,
            long live,
            long idle,
            long creations,
            long disposals,
            long idleHits) {
        PoolStats stats = pool.stats();
        assertEquals(
                List.of(live, idle, creations, disposals, idleHits),
                List.of(stats.live(), stats.idle(), stats.creations(), stats.disposals(), stats.idleHits()),
                when + ": " + stats);
    }

    @Test
    void pendingDecrementsAndDrainsCountDeferredReleases() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().drainDelay(Duration.ofHours(1)));
        List<Handle<Session>> handles = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < 5; i++) {
                handles.add(pool.acquire("k" + i));
            }
        }
        assertEquals(0, pool.stats().drains(), "nothing was pending");
        onOtherThread(() -> {
            handles.forEach(Handle::close);
            return null;
        });
        assertEquals(5, pool.stats().pendingDecrements());
        assertEquals(5, pool.stats().live(), "a pending decrement keeps its object live");

        pool.attach().close();
        PoolStats stats = pool.stats();
        assertEquals(0, stats.pendingDecrements());
        assertEquals(1, stats.drains(), "one batch");
        assertEquals(0, stats.live());
        assertEquals(5, stats.disposals());
        pool.attach().close();
        assertEquals(1, pool.stats().drains(), "an attach with nothing pending drains nothing");
        pool.close();
    }

    @Test
    void timeoutsCountTheWaitsThePoolEndedForTime() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("a");
        }
        assertThrows(WaitTimeoutException.class, () -> pool.acquire("b", Duration.ZERO));
        CompletableFuture<Handle<Session>> async =
                pool.acquireAsync("b", Duration.ZERO).toCompletableFuture();
        assertTrue(
                assertThrows(ExecutionException.class, () -> async.get(30, TimeUnit.SECONDS))
                                .getCause()
                        instanceof WaitTimeoutException);
        CompletableFuture<Integer> call =
                pool.callAsync("b", Duration.ZERO, session -> 1).toCompletableFuture();
        assertTrue(
                assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS))
                                .getCause()
                        instanceof WaitTimeoutException);
        assertEquals(3, pool.stats().timeouts(), "object, async object, async call");

        CountDownLatch inTheWorld = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        TestKit.Forked<Void> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                inTheWorld.countDown();
                awaitLatch(leave);
            }
            return null;
        });
        awaitLatch(inTheWorld);
        assertThrows(WaitTimeoutException.class, () -> pool.attach(Duration.ZERO));
        leave.countDown();
        stopper.join();
        assertEquals(4, pool.stats().timeouts(), "and the gate");

        assertThrows(CapacityExhaustedException.class, () -> {
            try (Attachment attached = pool.attach()) {
                pool.acquire("b");
            }
        });
        assertEquals(4, pool.stats().timeouts(), "a refusal is not a timeout");
        held.close();
        pool.close();
    }

    @Test
    void liveKeysListKeysWithAnObjectLiveOrIdle() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().idle(cache -> cache.maximumSize(10)));
        assertEquals(Set.of(), pool.liveKeys());
        try (Attachment attached = pool.attach()) {
            Handle<Session> a = pool.acquire("a");
            pool.acquire("b").close(); // idle
            Set<String> keys = pool.liveKeys();
            assertEquals(Set.of("a", "b"), keys);
            pool.invalidate("b");
            assertEquals(Set.of("a"), pool.liveKeys());
            assertEquals(Set.of("a", "b"), keys, "a snapshot");
            assertThrows(UnsupportedOperationException.class, () -> keys.add("c"));
            a.close();
        }
        assertEquals(Set.of("a"), pool.liveKeys(), "idle");
        pool.clearIdle();
        assertEquals(Set.of(), pool.liveKeys());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void liveKeysListTheKeyOfAnObjectInvalidatedWhileInUseAsStatsCountsIt() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        try (Attachment attached = pool.attach()) {
            Handle<Session> held = pool.acquire("k");
            assertTrue(pool.invalidate("k"));
            assertEquals(1, pool.stats().live(), "the retired object is live while held");
            assertEquals(Set.of("k"), pool.liveKeys());
            held.close();
            assertEquals(Set.of(), pool.liveKeys(), "disposed at zero");
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void evictionsAreCountedByCause() {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(3).idle(cache -> cache.maximumSize(1)
                        .expireAfterAccess(Duration.ofMinutes(1))
                        .ticker(ticker)
                        .executor(Runnable::run)));
        try (Attachment attached = pool.attach()) {
            pool.acquire("a").close();
            pool.acquire("b").close(); // over the size bound: one of the two is evicted
        }
        assertEquals(1, pool.stats().evictions(EvictionCause.SIZE));
        ticker.advance(Duration.ofMinutes(2));
        try (Attachment attached = pool.attach()) {
            pool.acquire("c").close(); // the write expires the survivor of "a" and "b"
        }
        assertEquals(1, pool.stats().evictions(EvictionCause.EXPIRED));
        try (Attachment attached = pool.attach();
                Handle<Session> d = pool.acquire("d");
                Handle<Session> e = pool.acquire("e");
                Handle<Session> f = pool.acquire("f")) { // the third needs the permit of the idle "c"
            PoolStats stats = pool.stats();
            assertEquals(1, stats.evictions(EvictionCause.CAPACITY));
            assertEquals(3, stats.evictions());
            assertEquals(0, stats.evictions(EvictionCause.COLLECTED));
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void capacityWaitersCountAcquiresInLine() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("a");
        }
        List<CompletableFuture<Handle<Session>>> waiters = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            waiters.add(pool.acquireAsync("w" + i, CancellationToken.none()).toCompletableFuture());
            assertEquals(i, pool.stats().capacityWaiters());
        }
        try (Attachment attached = pool.attach()) {
            held.close();
        }
        assertEquals(2, pool.stats().capacityWaiters());
        pool.close();
        assertEquals(0, pool.stats().capacityWaiters());
        assertTrue(waiters.stream().allMatch(CompletableFuture::isDone));
        waiters.get(0).join().close();
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void leaksCountHandlesFoundUnreachable() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(
                engine.builder().leakDetection(LeakDetection.PARANOID).drainDelay(Duration.ofMillis(10)));
        dropOneHandle(pool);
        eventually().pollInterval(Duration.ofMillis(50)).until(() -> {
            System.gc();
            return pool.stats().leaks() == 1;
        });
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    private static void dropOneHandle(RefPool<String, Session> pool) {
        try (Attachment attached = pool.attach()) {
            pool.acquire("leaked");
        }
    }

    @Test
    void jfrRecordsDrainsAttachWaitsAndLeaks() throws Exception {
        Path file = Files.createTempFile("refpool-events", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.refpool.Drain");
            recording.enable("io.refpool.AttachWait");
            recording.enable("io.refpool.Leak");
            recording.start();

            Engine engine = new Engine();
            // no drainer during the test: the three deferred releases below are drained as one batch
            RefPool<String, Session> pool = engine.build(engine.builder()
                    .attachMode(AttachMode.GLOBAL) // a second attacher waits: an attach-wait event
                    .name("events")
                    .leakDetection(LeakDetection.PARANOID)
                    .drainDelay(Duration.ofHours(1)));
            // a drain of three deferred releases
            List<Handle<Session>> handles = new ArrayList<>();
            try (Attachment attached = pool.attach()) {
                for (int i = 0; i < 3; i++) {
                    handles.add(pool.acquire("k" + i));
                }
            }
            onOtherThread(() -> {
                handles.forEach(Handle::close);
                return null;
            });
            pool.attach().close();
            // an attach wait
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch letGo = new CountDownLatch(1);
            TestKit.Forked<Void> holder = fork("holder", () -> {
                try (Attachment attached = pool.attach()) {
                    holding.countDown();
                    awaitLatch(letGo);
                }
                return null;
            });
            awaitLatch(holding);
            TestKit.Forked<Void> waiter = fork("waiter", () -> {
                pool.attach().close();
                return null;
            });
            TestKit.awaitParked(waiter.thread);
            letGo.countDown();
            holder.join();
            waiter.join();
            // a leak
            dropOneHandle(pool);
            eventually().pollInterval(Duration.ofMillis(50)).until(() -> {
                System.gc();
                return !engine.errors(PoolError.Kind.HANDLE_LEAKED).isEmpty(); // reported after its event
            });
            pool.close();

            recording.stop();
            recording.dump(file);
            List<RecordedEvent> events = RecordingFile.readAllEvents(file);
            List<String> names = events.stream()
                    .map(e -> e.getEventType().getName())
                    .distinct()
                    .collect(Collectors.toList());
            assertTrue(
                    names.containsAll(List.of("io.refpool.Drain", "io.refpool.AttachWait", "io.refpool.Leak")),
                    names.toString());
            assertTrue(events.stream()
                    .filter(e -> e.getEventType().getName().equals("io.refpool.Drain"))
                    .anyMatch(e -> e.getInt("batchSize") == 3));
            assertTrue(
                    events.stream()
                            .filter(e -> e.getEventType().getName().startsWith("io.refpool."))
                            .allMatch(e -> "events".equals(e.getString("pool"))),
                    "every event names its pool");
            RecordedEvent leak = events.stream()
                    .filter(e -> e.getEventType().getName().equals("io.refpool.Leak"))
                    .findFirst()
                    .orElseThrow();
            assertEquals("leaked", leak.getString("key"));
            assertTrue(leak.getString("site").contains("dropOneHandle"), leak.getString("site"));
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
