package io.refpool.core;

import static io.refpool.core.TestKeyedPoolFixtures.awaitLatch;
import static io.refpool.core.TestKeyedPoolFixtures.onOtherThread;
import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.PauseAt;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.ReleaseQueueHooks.Point;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Capacity: {@code maxObjects} bounds live plus idle objects. An attached acquire evicts idle
 * objects and then fails fast; {@code acquireAsync} waits in line, detached, and is served FIFO as
 * objects free up. Cancelled and timed-out waiters lose no permit, which the tests check by
 * acquiring up to {@code maxObjects} objects afterwards.
 */
class CapacityTest {
    private static CompletableFuture<Handle<Session>> acquireAsync(RefPool<String, Session> pool, String key) {
        return pool.acquireAsync(key, CancellationToken.none()).toCompletableFuture();
    }

    /** {@return a handle to {@code key}, acquired attached; the thread is detached again} */
    private static Handle<Session> acquireAttached(RefPool<String, Session> pool, String key) {
        try (Attachment attached = pool.attach()) {
            return pool.acquire(key);
        }
    }

    /** {@return the exception {@code future} failed with, unwrapped; waits (bounded) for it} */
    static Throwable failureOf(CompletableFuture<?> future) throws Exception {
        Throwable failure = future.handle((value, t) -> t).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertTrue(failure != null, "the future succeeded: " + future);
        return failure instanceof CompletionException ? failure.getCause() : failure;
    }

    /**
     * Checks that exactly {@code maxObjects} new objects can be created now (nothing idle, nothing
     * live): no permit was lost and none was made up. Disposes them again.
     */
    static void assertAllPermitsFree(RefPool<String, Session> pool, int maxObjects) {
        assertAllPermitsFree(pool, maxObjects, i -> "probe-" + i);
    }

    /** {@link #assertAllPermitsFree(RefPool, int)} with keys {@code probe.apply(i)}; -1 for one beyond. */
    static <K, V> void assertAllPermitsFree(RefPool<K, V> pool, int maxObjects, IntFunction<K> probe) {
        List<Handle<V>> handles = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < maxObjects; i++) {
                handles.add(pool.acquire(probe.apply(i)));
            }
            assertThrows(CapacityExhaustedException.class, () -> pool.acquire(probe.apply(-1)));
            handles.forEach(Handle::close);
        }
    }

    @Test
    void aCapacityReclaimWithoutAnIdleCacheTakesAnObjectAtZeroWhoseReleaserIsPaused() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(AttachMode.SHARED).maxObjects(1));
        io.refpool.core.internal.PoolHooks.Point atZero = io.refpool.core.internal.PoolHooks.Point.REACHED_ZERO;
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Handle<Session> a = acquireAttached(pool, "a");
        TestKit.Forked<Void> releaser = TestKit.unstartedRun("releaser", () -> {
            try (Attachment attached = pool.attach()) {
                a.close(); // count 0, held before its fate is decided
            }
        });
        TestPoolHooks.Pause paused = hooks.pause(atZero, releaser.thread);
        releaser.start();
        paused.awaitArrival();

        // no permit is free: the acquire scans the slots and reclaims "a", which is at count 0
        Handle<Session> b = pool.acquireAsync("b", CancellationToken.none())
                .toCompletableFuture()
                .get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals("b", b.key());
        paused.proceed();
        releaser.join();
        assertEquals(1, pool.stats().disposals(DisposalCause.CAPACITY), "the reclaim disposed it, once");
        b.close();
        pool.close();
        assertEquals(2, pool.stats().disposals());
        assertEquals(List.of(), engine.violations);
        assertEquals(List.of(), engine.errors);
    }

    /** The sample of {@link CapacityExhaustedException}'s javadoc, in every mode: it returns once a permit frees. */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void theCapacityExhaustedSampleWaitsWithItsAttachmentSuspended(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a"); // the one permit
        TestKit.Forked<String> sample = TestKit.fork("sample", () -> {
            try (Attachment attached = pool.attach()) {
                Handle<Session> handle;
                try {
                    handle = pool.acquire("b");
                } catch (CapacityExhaustedException full) {
                    handle = pool.acquire("b", Duration.ofSeconds(30)); // waits in line, the attachment suspended
                }
                try (Handle<Session> held = handle) {
                    assertTrue(pool.isAttached(), "attached again when the wait returned");
                    return held.get().key;
                }
            }
        });
        TestKit.awaitParked(sample.thread);
        TestKit.forkRun("closer", a::close).join(); // off attachment: its release needs the gate
        assertEquals("b", sample.join());
        pool.close();
        assertEquals(List.of(), engine.violations);
    }

    @Test
    void aTimedAcquireTimesOutNamingTheKeyAndThePoolAndHoldsNothing() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(
                engine.builder().name("tenants").attachMode(AttachMode.SHARED).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        io.refpool.sync.WaitTimeoutException timedOut = assertThrows(
                io.refpool.sync.WaitTimeoutException.class, () -> pool.acquire("b", Duration.ofMillis(20)));
        assertTrue(timedOut.getMessage().contains("'b'"), timedOut.getMessage());
        assertTrue(timedOut.getMessage().contains("pool 'tenants'"), timedOut.getMessage());
        assertEquals(0, pool.stats().capacityWaiters());
        pool.attached(() -> {
            a.close();
            return null;
        });
        assertAllPermitsFree(pool, 1);
        pool.close();
    }

    @Test
    void waitersAreServedFifoAsObjectsFreeUp() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(2));
        Handle<Session> a;
        Handle<Session> b;
        try (Attachment attached = pool.attach()) {
            a = pool.acquire("a");
            b = pool.acquire("b");
        }
        List<String> served = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Handle<Session>>> waiters = new ArrayList<>();
        for (String key : List.of("c", "d", "e")) {
            waiters.add(acquireAsync(pool, key).whenComplete((handle, failure) -> served.add(key)));
        }
        assertEquals(3, pool.stats().capacityWaiters());
        assertEquals(List.of(), served);

        try (Attachment attached = pool.attach()) {
            a.close(); // disposed, not idled: its permit goes to the head waiter
        }
        assertEquals(List.of("c"), served);
        try (Attachment attached = pool.attach()) {
            b.close();
        }
        assertEquals(List.of("c", "d"), served);
        try (Attachment attached = pool.attach()) {
            waiters.get(0).join().close();
        }
        assertEquals(List.of("c", "d", "e"), served);
        assertEquals(0, pool.stats().capacityWaiters());
        try (Attachment attached = pool.attach()) {
            waiters.get(1).join().close();
            waiters.get(2).join().close();
        }
        assertAllPermitsFree(pool, 2);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aCancelledWaiterLosesNoPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(2));
        Handle<Session> a;
        Handle<Session> b;
        try (Attachment attached = pool.attach()) {
            a = pool.acquire("a");
            b = pool.acquire("b");
        }
        CancellationSource source = new CancellationSource();
        CompletableFuture<Handle<Session>> waiter =
                pool.acquireAsync("c", source.token()).toCompletableFuture();
        CompletableFuture<Handle<Session>> behind = acquireAsync(pool, "d");
        assertEquals(2, pool.stats().capacityWaiters());

        source.cancel();
        assertInstanceOf(CancellationException.class, failureOf(waiter));
        assertEquals(1, pool.stats().capacityWaiters());
        try (Attachment attached = pool.attach()) {
            a.close();
        }
        try (Handle<Session> d = behind.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                Attachment attached = pool.attach()) {
            assertEquals("d", d.get().key, "the next waiter got the freed permit");
            b.close();
        }
        assertAllPermitsFree(pool, 2);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aTimedOutWaiterLosesNoPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CancellationSource deadline = new CancellationSource();
        deadline.cancelAfter(Duration.ofMillis(50));
        CompletableFuture<Handle<Session>> waiter =
                pool.acquireAsync("b", deadline.token()).toCompletableFuture();

        assertInstanceOf(CancellationException.class, failureOf(waiter));
        assertEquals(0, pool.stats().capacityWaiters());
        try (Attachment attached = pool.attach()) {
            a.close();
        }
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aWaiterWhoseFutureTheCallerCancelsLosesNoPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> waiter = acquireAsync(pool, "b");
        assertTrue(waiter.cancel(false), "the caller gives up on its own future");
        try (Attachment attached = pool.attach()) {
            a.close();
        }
        assertEquals(0, pool.stats().capacityWaiters());
        assertEquals(0, pool.stats().live(), "no object is held for a caller who gave up");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aWaiterWhoseFutureTheCallerCompletesLeavesTheLineAndLosesNoPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> waiter = acquireAsync(pool, "b");
        assertEquals(1, pool.stats().capacityWaiters());
        assertTrue(waiter.complete(null), "the caller completes its own future");
        assertEquals(0, pool.stats().capacityWaiters(), "completing the future ends the wait, as cancelling does");
        try (Attachment attached = pool.attach()) {
            a.close();
        }
        assertEquals(0, pool.stats().live(), "no object is created for a caller who gave up");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    /**
     * The timed form as the token form: a caller that settles its own future, with a value or a
     * cancel, ends the wait at once (no dead waiter keeps its place in line, takes the next permit
     * and runs the factory for nobody), and nothing counts as a timeout.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aTimedWaiterWhoseFutureTheCallerSettlesLeavesTheLineAndIsNoTimeout(boolean withAValue) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> waiter =
                pool.acquireAsync("b", Duration.ofMinutes(1)).toCompletableFuture();
        assertEquals(1, pool.stats().capacityWaiters());
        assertTrue(withAValue ? waiter.complete(null) : waiter.cancel(false), "the caller settles its own future");
        assertEquals(0, pool.stats().capacityWaiters(), "settling the future ends the wait");
        try (Attachment attached = pool.attach()) {
            a.close();
        }
        assertEquals(
                List.of("a"),
                engine.created.stream().map(session -> session.key).toList(),
                "no factory for b");
        assertEquals(0, pool.stats().timeouts(), "the caller's own settling is no timeout");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aWaiterWhoseFutureTimesOutLosesNoPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> waiter = acquireAsync(pool, "b").orTimeout(20, TimeUnit.MILLISECONDS);
        assertInstanceOf(java.util.concurrent.TimeoutException.class, failureOf(waiter));
        try (Attachment attached = pool.attach()) {
            a.close(); // may serve the waiter before its wait is cancelled: its handle is then closed
        }
        eventually().until(() -> pool.stats().live() == 0); // no object is held for a caller who gave up
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aWaiterCancelledAfterItsPermitWasGrantedGivesThePermitBack() throws Exception {
        Engine engine = new Engine();
        // GLOBAL: the granted waiter then waits for the gate this thread holds
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(AttachMode.GLOBAL).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CancellationSource source = new CancellationSource();
        CompletableFuture<Handle<Session>> waiter =
                pool.acquireAsync("b", source.token()).toCompletableFuture();
        try (Attachment attached = pool.attach()) {
            a.close(); // grants the permit to the waiter, which now waits for the gate this thread holds
            assertEquals(0, pool.stats().capacityWaiters());
            assertFalse(waiter.isDone());
            source.cancel(); // cancels the wait for the gate, with the permit in hand
        }
        assertInstanceOf(CancellationException.class, failureOf(waiter));
        assertEquals(1, engine.factoryCalls.get(), "the cancelled waiter created nothing");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachedAcquireFailsFastWhenCapacityIsExhausted(AttachMode mode) {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1).idle(cache -> {}));
        try (Attachment attached = pool.attach();
                Handle<Session> a = pool.acquire("a")) {
            CapacityExhaustedException full =
                    assertThrows(CapacityExhaustedException.class, () -> pool.acquire("tenant-7"));
            assertTrue(full.getMessage().contains("'tenant-7'"), full.getMessage());
            assertTrue(full.getMessage().contains("1 objects"), full.getMessage());
            assertTrue(full.getMessage().contains("acquireAsync"), full.getMessage());
            assertEquals(1, engine.factoryCalls.get(), "no factory call");
            assertEquals(1, pool.stats().live());
            assertEquals(0, pool.stats().capacityWaiters(), "the attached acquire did not wait in line");
        }
        try (Attachment attached = pool.attach();
                Handle<Session> next = pool.acquire("tenant-7")) {
            assertEquals("tenant-7", next.get().key, "the key is not stuck: the idle 'a' made room");
        }
        assertEquals(1, pool.stats().evictions(EvictionCause.CAPACITY));
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void creationBeyondTheBoundEvictsIdleObjectsFirst() {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(2).idle(cache -> cache.maximumSize(100)));
        try (Attachment attached = pool.attach()) {
            pool.acquire("a").close();
            pool.acquire("b").close();
            assertEquals(2, pool.stats().idle());
            try (Handle<Session> c = pool.acquire("c")) {
                assertEquals("c", c.get().key);
                assertEquals(1, pool.stats().idle());
                assertEquals(1, engine.disposed.size(), "one idle object made room");
                try (Handle<Session> d = pool.acquire("d")) {
                    assertEquals(0, pool.stats().idle());
                    assertThrows(CapacityExhaustedException.class, () -> pool.acquire("e"));
                }
            }
        }
        assertEquals(2, pool.stats().evictions(EvictionCause.CAPACITY));
        engine.assertNoViolations();
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void whileWaitersAreQueuedObjectsReachingZeroAreDisposedNotIdled() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(1).idle(cache -> cache.maximumSize(100)));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> waiter = acquireAsync(pool, "b");
        try (Attachment attached = pool.attach()) {
            a.close();
        }
        assertTrue(a.isOpen() == false && engine.created.get(0).isDisposed(), "'a' was disposed, not idled");
        try (Handle<Session> b = waiter.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                Attachment attached = pool.attach()) {
            assertEquals("b", b.get().key);
        }
        assertEquals(0, pool.stats().evictions(), "disposed for a waiter, not evicted");
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aWaiterIsServedByAnObjectThatIdledAfterItsAttemptButBeforeItQueued() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .attachMode(AttachMode.SHARED)
                .maxObjects(1)
                .idle(cache -> {})
                .drainDelay(Duration.ofHours(1)));
        Handle<Session> x;
        Handle<Session> share1;
        Handle<Session> share2;
        try (Attachment attached = pool.attach()) {
            x = pool.acquire("x");
            share1 = x.share();
            share2 = x.share();
        }
        onOtherThread(() -> {
            share1.close(); // pending: the waiter's attach will find the queue dirty
            return null;
        });

        TestKit.Forked<CompletableFuture<Handle<Session>>> waiter =
                TestKit.unstarted("waiter", () -> acquireAsync(pool, "y"));
        // the waiter takes the queue lock to drain when it attaches (1st) and when it detaches (2nd)
        PauseAt attachDrain = new PauseAt(Point.QUEUE_LOCK, 1).on(waiter.thread);
        PauseAt detachDrain = new PauseAt(Point.QUEUE_LOCK, 2).on(waiter.thread);
        pool.core().releaseQueue().setHooks(point -> {
            attachDrain.at(point);
            detachDrain.at(point);
        });
        waiter.start();
        attachDrain.awaitArrival();
        onOtherThread(() -> {
            share2.close(); // raises the flag again, so the waiter's detach drains too
            return null;
        });
        attachDrain.proceed();
        detachDrain.awaitArrival(); // the waiter found no capacity and has not queued for it yet

        try (Attachment attached = pool.attach()) {
            x.close(); // nobody waits in line yet: "x" idles
            assertEquals(1, pool.stats().idle());
            assertEquals(0, pool.stats().capacityWaiters());
        }
        detachDrain.proceed();
        pool.core().releaseQueue().setHooks(null);

        CompletableFuture<Handle<Session>> y = waiter.join();
        eventually().until(y::isDone);
        try (Handle<Session> handle = y.get();
                Attachment attached = pool.attach()) {
            assertEquals("y", handle.get().key);
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anObjectIdlingJustAsAWaiterQueuesIsReclaimedByItsReleaser() throws Exception {
        Engine engine = new Engine();
        CountDownLatch inPut = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicReference<Thread> pauseIn = new AtomicReference<>();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .attachMode(AttachMode.SHARED)
                .maxObjects(1)
                // the weigher runs inside the cache's put, before the object is in the map
                .idle(cache -> cache.maximumWeight(100).weigher((key, value) -> {
                    if (Thread.currentThread() == pauseIn.get()) {
                        inPut.countDown();
                        awaitLatch(proceed);
                    }
                    return 1;
                }))
                .drainDelay(Duration.ofHours(1)));
        Handle<Session> x;
        try (Attachment attached = pool.attach()) {
            x = pool.acquire("x");
        }
        TestKit.Forked<Void> releaser = TestKit.unstarted("releaser", () -> {
            try (Attachment attached = pool.attach()) {
                x.close(); // nobody waits in line: "x" goes to the cache
            }
            return null;
        });
        pauseIn.set(releaser.thread);
        releaser.start();
        assertTrue(inPut.await(BOUND.toSeconds(), TimeUnit.SECONDS));

        CompletableFuture<Handle<Session>> y = acquireAsync(pool, "y"); // finds nothing idle, queues
        assertEquals(1, pool.stats().capacityWaiters());
        proceed.countDown();
        releaser.join();

        eventually().until(y::isDone);
        try (Handle<Session> handle = y.get();
                Attachment attached = pool.attach()) {
            assertEquals("y", handle.get().key);
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    /**
     * The lazy idle tier leaves a revived object's cache entry in place. When that object reaches
     * count 0 again while a waiter needs its permit, it is disposed for the line, and its entry goes
     * with it: a disposed object left in the cache would hold a place of the idle bound.
     */
    @Test
    void anObjectDisposedForTheLineAfterARevivalLeavesTheIdleCache() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(1).idle(cache -> cache.maximumSize(10)));
        acquireAttached(pool, "a").close(); // idles: the cache takes it
        Handle<Session> a = acquireAttached(pool, "a"); // revived: the cache keeps its entry
        assertEquals(1, pool.core().control().cachedCount());
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b"); // waits for a's permit
        assertEquals(1, pool.stats().capacityWaiters());

        try (Attachment attached = pool.attach()) {
            a.close(); // count 0 with a waiter in line: disposed, its permit goes to b
        }
        Handle<Session> granted = b.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals(0, pool.core().control().cachedCount(), "the disposed object left the cache");
        try (Attachment attached = pool.attach()) {
            granted.close();
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
