package io.refpool.core;

import static io.refpool.core.CapacityTest.assertAllPermitsFree;
import static io.refpool.core.TestKeyedPoolFixtures.awaitLatch;
import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.EntrySeams;
import io.refpool.core.internal.PoolHooks;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scenarios taken from documented bugs of peer pools (commons-pool2, Stormpot, Caffeine, HikariCP,
 * kotlinx.coroutines), translated to refpool's API. After each fault: no permit lost, every object
 * disposed exactly once (never under an open handle), nothing stuck, the failure reported.
 */
class PeerFailuresTest {
    private static CompletableFuture<Handle<Session>> acquireAsync(RefPool<String, Session> pool, String key) {
        return pool.acquireAsync(key, CancellationToken.none()).toCompletableFuture();
    }

    private static CompletableFuture<Handle<Session>> acquireAsync(
            RefPool<String, Session> pool, String key, CancellationToken token) {
        return pool.acquireAsync(key, token).toCompletableFuture();
    }

    private static Handle<Session> acquireAttached(RefPool<String, Session> pool, String key) {
        try (Attachment attached = pool.attach()) {
            return pool.acquire(key);
        }
    }

    private static void closeAttached(RefPool<String, Session> pool, Handle<?> handle) {
        try (Attachment attached = pool.attach()) {
            handle.close();
        }
    }

    private static <T> T get(CompletableFuture<T> future) throws Exception {
        return future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    /** {@return the failure {@code future} settles with, unwrapped; fails if it succeeds} */
    private static Throwable failure(CompletableFuture<?> future) throws Exception {
        return CapacityTest.failureOf(future);
    }

    private static void awaitWaiters(RefPool<String, Session> pool, long n) {
        eventually().alias(n + " capacity waiters").until(() -> pool.stats().capacityWaiters() == n);
    }

    // ------------------------------------------------------------------------------------------------
    // 1. go-commons-pool #25 / commons-pool POOL-356, PR #346: a failing create/passivate leaves
    //    waiting borrowers blocked for ever although capacity is free.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aGrantedWaitersFactoryFailureHandsThePermitToTheNextWaiter(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        engine.beforeCreate = key -> {
            if (key.equals("b")) {
                throw new IllegalStateException("b is down");
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        CompletableFuture<Handle<Session>> c = acquireAsync(pool, "c");
        awaitWaiters(pool, 2);

        TestKit.forkRun("releaser", () -> closeAttached(pool, a)).join();

        Throwable bFailed = failure(b);
        assertInstanceOf(IllegalStateException.class, bFailed);
        assertEquals("b is down", bFailed.getMessage());
        Handle<Session> cHandle = get(c);
        assertEquals("c", cHandle.key());
        closeAttached(pool, cHandle);
        assertEquals(1, engine.errors(PoolError.Kind.FACTORY_FAILED).size(), "the failure is reported");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 2. commons-pool: destroy() throwing leaks a maxTotal slot (the object is never "destroyed"
    //    from the pool's accounting), so the next borrower waits for ever.

    @Test
    void aThrowingDisposerStillHandsItsPermitToAWaiter() throws Exception {
        Engine engine = new Engine();
        engine.afterDispose = session -> {
            if (session.key.equals("a")) {
                throw new IllegalStateException("close of a failed");
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        awaitWaiters(pool, 1);

        TestKit.forkRun("releaser", () -> closeAttached(pool, a)).join();

        Handle<Session> bHandle = get(b);
        assertEquals("b", bHandle.key());
        closeAttached(pool, bHandle);
        assertEquals(1, engine.errors(PoolError.Kind.DISPOSER_FAILED).size(), "the disposer's failure is reported");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 3. Stormpot #72: an allocation failure is rethrown to claimers more than once / long after;
    //    plus commons-pool: waiters for the same key queued for capacity when the creation fails.

    @Test
    void aCreationFailureReachesOnlyItsOwnWaitersAndTheNextRequestRetries() throws Exception {
        Engine engine = new Engine();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger bCalls = new AtomicInteger();
        engine.beforeCreate = key -> {
            if (key.equals("b") && bCalls.incrementAndGet() == 1) {
                entered.countDown();
                awaitLatch(release);
                throw new IllegalStateException("first b fails");
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b1 = acquireAsync(pool, "b");
        CompletableFuture<Handle<Session>> b2 = acquireAsync(pool, "b");
        awaitWaiters(pool, 2);

        TestKit.Forked<Void> releaser = TestKit.forkRun("releaser", () -> closeAttached(pool, a));
        awaitLatch(entered); // the first waiter's creation of b is under way, holding the one permit
        CompletableFuture<Handle<Session>> b3 = acquireAsync(pool, "b"); // waits for that creation
        release.countDown();
        releaser.join();

        assertEquals("first b fails", failure(b1).getMessage());
        assertEquals("first b fails", failure(b3).getMessage(), "a waiter of the creation shares its failure");
        // b2 was in line for capacity, not waiting for the failed creation: it either shares the failure
        // (single flight) or retries; it must settle, never hang
        Handle<Session> b2Handle = null;
        try {
            b2Handle = get(b2);
            System.out.println("AUDIT scenario 3: the capacity waiter b2 retried and got " + b2Handle.get());
        } catch (ExecutionException e) {
            System.out.println("AUDIT scenario 3: the capacity waiter b2 shared the failure " + e.getCause());
            assertEquals("first b fails", e.getCause().getMessage());
        }
        if (b2Handle != null) {
            closeAttached(pool, b2Handle);
        }
        // later requests are not answered with the stale failure
        Handle<Session> later = get(acquireAsync(pool, "b"));
        closeAttached(pool, later);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 4. kotlinx.coroutines #1323 / #2233: cancelling an acquire that was concurrently granted loses
    //    the permit. Here: the waiter is granted, its creation runs, then its token is cancelled.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aWaiterCancelledWhileItsGrantedCreationRunsLosesNothing(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            if (key.equals("b")) {
                entered.countDown();
                awaitLatch(release);
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CancellationSource source = new CancellationSource();
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b", source.token());
        awaitWaiters(pool, 1);

        TestKit.Forked<Void> releaser = TestKit.forkRun("releaser", () -> closeAttached(pool, a));
        awaitLatch(entered);
        source.cancel(); // while b's factory runs for the granted waiter
        release.countDown();
        releaser.join();

        try {
            Handle<Session> late = get(b); // the cancel came too late: the handle is the caller's
            closeAttached(pool, late);
        } catch (ExecutionException e) {
            assertInstanceOf(CancellationException.class, e.getCause());
        } catch (CancellationException e) {
            // read as a cancellation
        }
        pool.flush();
        eventually().until(() -> pool.stats().live() == 0);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    /** The same, but the caller cancels the returned future itself while the creation runs. */
    @Test
    void aWaiterWhoseFutureIsCancelledWhileItsGrantedCreationRunsLosesNothing() throws Exception {
        Engine engine = new Engine();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            if (key.equals("b")) {
                entered.countDown();
                awaitLatch(release);
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        awaitWaiters(pool, 1);

        TestKit.Forked<Void> releaser = TestKit.forkRun("releaser", () -> closeAttached(pool, a));
        awaitLatch(entered);
        assertTrue(b.cancel(true));
        release.countDown();
        releaser.join();

        pool.flush();
        eventually().until(() -> pool.stats().live() == 0);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 5. commons-pool fairness / kotlinx withTimeout: a waiter that times out in the middle of the
    //    line must neither keep a permit nor stall the ones behind it; the line stays FIFO.

    @Test
    void aTimedOutWaiterInTheMiddleOfTheLineStallsNobodyAndTheLineStaysFifo() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        CompletableFuture<Handle<Session>> c =
                pool.acquireAsync("c", Duration.ofMillis(50)).toCompletableFuture();
        CompletableFuture<Handle<Session>> d = acquireAsync(pool, "d");
        assertInstanceOf(io.refpool.sync.WaitTimeoutException.class, failure(c));
        awaitWaiters(pool, 2);

        closeAttached(pool, a);
        Handle<Session> bHandle = get(b);
        assertFalse(d.isDone(), "d is behind b");
        closeAttached(pool, bHandle);
        Handle<Session> dHandle = get(d);
        closeAttached(pool, dHandle);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(
                List.of("a", "b", "d"),
                engine.created.stream().map(s -> s.key).toList().subList(0, 3));
    }

    // ------------------------------------------------------------------------------------------------
    // 6. commons-pool POOL-102 / HikariCP: an interrupted borrower must lose neither an object nor a
    //    reference; here it waits for another thread's creation of its key.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anInterruptedTimedAcquireWaitingForACreationLeaksNoReference(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            entered.countDown();
            awaitLatch(release);
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(mode));
        TestKit.Forked<Handle<Session>> creator = TestKit.fork("creator", () -> acquireAttached(pool, "a"));
        awaitLatch(entered);
        TestKit.Forked<Handle<Session>> waiter =
                TestKit.fork("waiter", () -> pool.acquire("a", Duration.ofSeconds(30)));
        TestKit.awaitParked(waiter.thread);
        waiter.thread.interrupt();
        Throwable interrupted = waiter.joinFailure();
        assertInstanceOf(WaitInterruptedException.class, interrupted);

        release.countDown();
        Handle<Session> a = creator.join();
        closeAttached(pool, a);
        pool.flush();
        eventually().until(() -> engine.created.get(0).isDisposed());
        assertEquals(0, pool.stats().live());
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    /** The same for an attached blocking acquire, which waits for the creation detached. */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anInterruptedAttachedAcquireWaitingForACreationLeaksNoReference(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            entered.countDown();
            awaitLatch(release);
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(mode));
        TestKit.Forked<Handle<Session>> creator = TestKit.fork("creator", () -> acquireAttached(pool, "a"));
        awaitLatch(entered);
        TestKit.Forked<Handle<Session>> waiter = TestKit.fork("waiter", () -> acquireAttached(pool, "a"));
        TestKit.awaitParked(waiter.thread);
        waiter.thread.interrupt();
        Throwable interrupted = waiter.joinFailure();
        assertInstanceOf(WaitInterruptedException.class, interrupted);

        release.countDown();
        Handle<Session> a = creator.join();
        closeAttached(pool, a);
        pool.flush();
        eventually().until(() -> engine.created.get(0).isDisposed());
        assertEquals(0, pool.stats().live());
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 7. commons-pool evictor destroying an object that a borrow just took / Caffeine #177 (removal
    //    listener called for a value still in use): an eviction queued, then the object revived.

    @Test
    void anEvictionQueuedJustBeforeARevivalNeverDisposesUnderTheHandle() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(AttachMode.SHARED).idle(cache -> cache.maximumSize(1)));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        closeAttached(pool, acquireAttached(pool, "a")); // a idle
        TestKit.Forked<Void> idler =
                TestKit.unstartedRun("idler", () -> closeAttached(pool, acquireAttached(pool, "b")));
        TestPoolHooks.Pause queued = hooks.pause(PoolHooks.Point.EVICTION_QUEUED, idler.thread);
        idler.start();
        queued.awaitArrival(); // one of a, b is evicted by Caffeine, the eviction not applied yet

        Handle<Session> a = acquireAttached(pool, "a");
        Handle<Session> b = acquireAttached(pool, "b");
        a.get().openHandles.incrementAndGet();
        b.get().openHandles.incrementAndGet();
        queued.proceed();
        idler.join();
        pool.flush();
        assertFalse(a.get().isDisposed(), "a disposed under its handle");
        assertFalse(b.get().isDisposed(), "b disposed under its handle");
        a.get().openHandles.decrementAndGet();
        b.get().openHandles.decrementAndGet();
        closeAttached(pool, a);
        closeAttached(pool, b);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        // an eviction applied by the reviving attach (every attach drains) disposes the evicted one
        // first, as SIZE, and the acquire makes a new one: never one under a handle
        assertTrue(pool.stats().disposals(DisposalCause.SIZE) >= engine.created.size() - 2);
    }

    // ------------------------------------------------------------------------------------------------
    // 8. commons-pool POOL-376 (invalidateObject NPE) and double return/invalidate corrupting counts.

    @Test
    void invalidatingAndClosingTwiceByEveryRouteDisposesOnceAndLosesNoPermit() throws Exception {
        Engine engine = new Engine();
        engine.replacedAtOnce = session -> true;
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(2));
        Handle<Session> h = acquireAttached(pool, "a");
        Session first = h.get();
        Handle<Session> shared;
        try (Attachment attached = pool.attach()) {
            shared = h.share();
        }
        assertTrue(h.invalidate());
        assertFalse(h.invalidate(), "already retired");
        assertFalse(pool.invalidate("a", first), "already retired");
        assertFalse(pool.invalidate("a"), "no current object for a");
        assertFalse(shared.invalidate());
        closeAttached(pool, h);
        closeAttached(pool, h); // a second close does nothing
        assertFalse(first.isDisposed(), "the shared handle still holds it");
        closeAttached(pool, shared);
        closeAttached(pool, shared);
        assertTrue(first.isDisposed());
        assertEquals(1, pool.stats().disposals(DisposalCause.RETIRED));
        assertAllPermitsFree(pool, 2);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 9. commons-pool testWhenExhaustedBlockClosePool / Stormpot #22: close while borrowers wait, and
    //    objects destroyed on close.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeFailsCapacityWaitersAndEveryObjectIsDisposedOnce(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(2).idle(cache -> cache.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        closeAttached(pool, acquireAttached(pool, "idle"));
        Handle<Session> c = acquireAttached(pool, "c"); // reclaims "idle"
        CompletableFuture<Handle<Session>> waiter = acquireAsync(pool, "d");
        awaitWaiters(pool, 1);
        pool.close();
        assertInstanceOf(PoolClosedException.class, failure(waiter));
        assertEquals("a", a.get().key, "open handles stay usable");
        a.close();
        c.close();
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(3, engine.created.size());
    }

    // ------------------------------------------------------------------------------------------------
    // 10. Close racing a borrow whose create is in flight (commons-pool: objects created during close
    //     never destroyed; Stormpot #22 stuck shutdown).

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeDuringAGrantedWaitersCreationDisposesItsObjectOnce(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            if (key.equals("b")) {
                entered.countDown();
                awaitLatch(release);
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        awaitWaiters(pool, 1);
        TestKit.Forked<Void> releaser = TestKit.forkRun("releaser", () -> closeAttached(pool, a));
        awaitLatch(entered);
        TestKit.Forked<Void> closer = TestKit.forkRun("closer", pool::close);
        eventually().until(pool::isClosed);
        release.countDown();
        closer.join();
        releaser.join();
        try {
            Handle<Session> late = get(b);
            late.close();
        } catch (ExecutionException e) {
            assertInstanceOf(PoolClosedException.class, e.getCause());
        }
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(0, pool.stats().live());
    }

    // ------------------------------------------------------------------------------------------------
    // 11. commons-pool POOL-391: capacity freed by clear/invalidate not given to waiting borrowers.

    @Test
    void capacityFreedByInvalidatingAnObjectInUseReachesTheWaiterAtItsClose() throws Exception {
        Engine engine = new Engine();
        engine.replacedAtOnce = session -> true;
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(1).idle(c -> c.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        awaitWaiters(pool, 1);
        assertTrue(pool.invalidate("a"));
        assertFalse(b.isDone(), "a still holds the permit");
        closeAttached(pool, a);
        Handle<Session> bHandle = get(b);
        closeAttached(pool, bHandle); // b idles
        assertEquals(1, pool.clearIdle());
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 12. commons-pool: a factory that borrows from its own pool deadlocks. Here the factory of one
    //     key calls another key; with no room it must fail fast, not hang, and lose nothing.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aFactoryThatUsesAnotherKeyOfItsPoolNeitherHangsNorLeaks(AttachMode mode) throws Exception {
        AtomicInteger serial = new AtomicInteger();
        List<String> disposed = new CopyOnWriteArrayList<>();
        RefPool<String, String>[] holder = newArray();
        RefPool<String, String> pool = RefPool.<String, String>builder(key -> {
                    if (key.startsWith("outer")) {
                        return key + "(" + holder[0].call("inner-" + key, inner -> inner) + ")#"
                                + serial.incrementAndGet();
                    }
                    return key + "#" + serial.incrementAndGet();
                })
                .disposer((String key, String value, DisposalCause cause) -> disposed.add(value))
                .attachMode(mode)
                .maxObjects(2)
                .build();
        holder[0] = pool;
        assertTrue(pool.call("outer-1", v -> v).startsWith("outer-1(inner-outer-1#"));
        assertEquals(2, disposed.size(), "both released");

        // with one permit held by a live object, the outer one holds the other: its inner call finds none
        Handle<String> keep = pool.attached(() -> pool.acquire("keep"));
        Throwable failed = assertThrows(RuntimeException.class, () -> pool.call("outer-2", v -> v));
        assertTrue(hasCause(failed, CapacityExhaustedException.class), "fails for capacity: " + failed);
        pool.runAttached(keep::close);
        assertTrue(pool.call("outer-3", v -> v).startsWith("outer-3(inner-outer-3#"));
        pool.close();
        assertEquals(serial.get(), disposed.size(), "every object disposed: " + disposed);
    }

    @SuppressWarnings("unchecked")
    private static <K, V> RefPool<K, V>[] newArray() {
        return (RefPool<K, V>[]) new RefPool<?, ?>[1];
    }

    private static boolean hasCause(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------------
    // 13. commons-pool: validation failure on borrow, then a create that fails, hangs or leaks the
    //     slot (POOL-356 / PR #346: "validateObject is false ... create returns null ... deadlock").

    @Test
    void aRefusedRevivalFollowedByAFailingFactoryLosesNoCapacity() throws Exception {
        Engine engine = new Engine();
        AtomicInteger aCalls = new AtomicInteger();
        engine.beforeCreate = key -> {
            if (key.equals("a") && aCalls.incrementAndGet() == 2) {
                throw new IllegalStateException("second a fails");
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder()
                .maxObjects(1)
                .idle(cache -> cache.maximumSize(4))
                .validator((String key, Session s) -> false));
        closeAttached(pool, acquireAttached(pool, "a")); // a idle
        Throwable failed = failure(acquireAsync(pool, "a"));
        assertEquals("second a fails", failed.getMessage());
        assertEquals(1, pool.stats().disposals(DisposalCause.FAILED_VALIDATION));
        // the attached way too
        closeAttached(pool, acquireAttached(pool, "a")); // a third a, idle
        aCalls.set(1); // the next factory call of a fails again
        assertThrows(IllegalStateException.class, () -> acquireAttached(pool, "a"));
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 14. kotlinx.coroutines Mutex/Semaphore: a lock waiter cancelled in the race with its grant
    //     must not keep the lock.

    @Test
    void aSectionWaiterCancelledJustBeforeItsGrantLeavesTheSectionFree() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        Handle<Session> h = acquireAttached(pool, "a");
        Guard held = get(h.sectionAsync(CancellationToken.none()).toCompletableFuture()); // nobody's thread
        CompletableFuture<Guard> first =
                h.sectionAsync(CancellationToken.none()).toCompletableFuture();
        CancellationSource second = new CancellationSource();
        CompletableFuture<Guard> next = h.sectionAsync(second.token()).toCompletableFuture();
        CompletableFuture<Void> chained = first.thenAccept(guard -> {
            second.cancel(); // the next waiter gives up while the first holds the section...
            guard.close(); // ...and the section is released right after
        });
        held.close();
        get(chained);
        TestKit.joinedCancellation(next);
        try (Attachment attached = pool.attach();
                Guard again = h.section(Duration.ofSeconds(5))) {
            assertSame(h.get(), h.get());
        }
        closeAttached(pool, h);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    /**
     * A section waiter whose caller completes its future with a value of its own ends its wait
     * there, as a cancel does: it keeps neither its place in line nor a reference on the object
     * until the holder lets go.
     */
    @Test
    void aSectionWaiterWhoseFutureTheCallerCompletesGivesItsReferenceBackAtOnce() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        Handle<Session> h = acquireAttached(pool, "a");
        Guard held = get(h.sectionAsync(CancellationToken.none()).toCompletableFuture());
        int holding = EntrySeams.countBehind(h);
        try (Attachment attached = pool.attach()) { // the wait's reference goes back at once, attached
            CompletableFuture<Guard> waiter =
                    h.sectionAsync(CancellationToken.none()).toCompletableFuture();
            assertEquals(holding + 1, EntrySeams.countBehind(h), "the waiter holds a reference");
            assertTrue(waiter.complete(null), "the caller completes its own future");
            assertEquals(holding, EntrySeams.countBehind(h), "its wait ended: the reference is back");
        }
        held.close();
        closeAttached(pool, h);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void aSectionWaiterCancelledJustAfterItsGrantKeepsAGuardItMustClose() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        Handle<Session> h = acquireAttached(pool, "a");
        Guard held = get(h.sectionAsync(CancellationToken.none()).toCompletableFuture()); // nobody's thread
        CompletableFuture<Guard> first =
                h.sectionAsync(CancellationToken.none()).toCompletableFuture();
        CancellationSource second = new CancellationSource();
        CompletableFuture<Guard> next = h.sectionAsync(second.token()).toCompletableFuture();
        CompletableFuture<Void> chained = first.thenAccept(guard -> {
            guard.close(); // hands the section to the next waiter...
            second.cancel(); // ...which gives up just after
        });
        held.close();
        get(chained);
        eventually().until(next::isDone);
        if (!next.isCompletedExceptionally()) {
            next.join().close(); // granted first: the guard is the caller's
        }
        try (Attachment attached = pool.attach();
                Guard again = h.section(Duration.ofSeconds(5))) {
            assertSame(h.get(), h.get());
        }
        closeAttached(pool, h);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 15. commons-pool: destroy() re-entering the pool during a capacity reclaim (evict to make room)
    //     deadlocks or leaks the slot.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDisposerThatUsesThePoolDuringACapacityReclaimNeitherHangsNorLeaks(AttachMode mode) throws Exception {
        List<String> errors = new CopyOnWriteArrayList<>();
        List<String> disposed = new CopyOnWriteArrayList<>();
        AtomicInteger serial = new AtomicInteger();
        RefPool<String, String>[] holder = newArray();
        RefPool<String, String> pool = RefPool.<String, String>builder(key -> key + "#" + serial.incrementAndGet())
                .disposer((String key, String value, DisposalCause cause) -> {
                    disposed.add(value + ":" + cause);
                    if (key.equals("a")) {
                        holder[0].call("from-disposer", v -> v); // no permit is free yet: fails fast
                    }
                })
                .errorListener(e -> errors.add(e.kind() + ": " + e.message()))
                .attachMode(mode)
                .maxObjects(1)
                .idle(cache -> cache.maximumSize(4))
                .build();
        holder[0] = pool;
        pool.run("a", v -> {}); // a idle
        assertEquals("b#", pool.call("b", v -> v).substring(0, 2)); // reclaims a; its disposer uses the pool
        assertTrue(disposed.get(0).startsWith("a#1:CAPACITY"), disposed.toString());
        pool.close();
        assertEquals(serial.get(), disposed.size(), "every object disposed once: " + disposed + " " + errors);
        assertEquals(disposed.size(), disposed.stream().distinct().count());
    }

    // ------------------------------------------------------------------------------------------------
    // 16. commons-pool / Vibur: a barging borrower takes capacity a queued waiter was handed.

    @Test
    void anAttachedAcquireNeverBargesAheadOfAWaiterHandedTheFreedPermit() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(1).idle(c -> c.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        awaitWaiters(pool, 1);
        try (Attachment attached = pool.attach()) {
            a.close(); // a is disposed for the line, its permit handed to b
            assertThrows(CapacityExhaustedException.class, () -> pool.acquire("c"));
        }
        Handle<Session> bHandle = get(b);
        assertEquals("b", bHandle.key());
        closeAttached(pool, bHandle);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 17. warm-up (commons-pool addObject / preparePool with a failing factory leaks capacity).

    @Test
    void aWarmUpWhoseFactoryFailsForOneKeyLosesNoCapacity() throws Exception {
        Engine engine = new Engine();
        engine.beforeCreate = key -> {
            if (key.equals("w2")) {
                throw new IllegalStateException("w2 down");
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(3).idle(c -> c.maximumSize(4)));
        CompletableFuture<Integer> warmed =
                pool.warmUp(List.of("w1", "w2", "w3"), CancellationToken.none()).toCompletableFuture();
        Integer opened = null;
        try {
            opened = get(warmed);
        } catch (ExecutionException e) {
            assertEquals("w2 down", e.getCause().getMessage());
        }
        if (opened != null) {
            assertEquals(2, opened);
        }
        pool.clearIdle();
        assertAllPermitsFree(pool, 3);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 18. Caffeine #177 / commons-pool: maxLifetime (a lifetime evictor) never disposes an object a
    //     waiter was just handed by a releaser at count 0.

    @Test
    void aWaiterServedByTheReleaseOfItsKeysObjectGetsTheLiveObject() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(1).idle(c -> c.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        CompletableFuture<Handle<Session>> a2 = acquireAsync(pool, "a"); // shares the live a at once
        Handle<Session> a2Handle = get(a2);
        assertSame(a.get(), a2Handle.get());
        closeAttached(pool, a);
        assertFalse(b.isDone(), "a still in use");
        assertFalse(a2Handle.get().isDisposed());
        closeAttached(pool, a2Handle);
        Handle<Session> bHandle = get(b);
        closeAttached(pool, bHandle);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 19. commons-pool POOL-?/Caffeine: an object invalidated (or past its lifetime) while in use must
    //     never be handed, at its last release, to a borrower queued for the same key.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anInvalidatedObjectReachingZeroIsNotServedToAWaiterOfItsOwnKey(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1).idle(c -> c.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        Session old = a.get();
        assertTrue(pool.invalidate("a"));
        CompletableFuture<Handle<Session>> again = acquireAsync(pool, "a"); // needs a new a: in line
        awaitWaiters(pool, 1);
        TestKit.forkRun("releaser", () -> closeAttached(pool, a)).join();
        Handle<Session> fresh = get(again);
        assertNotSame(old, fresh.get(), "the waiter was served the invalidated object");
        assertTrue(old.isDisposed());
        closeAttached(pool, fresh);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void aRetiredHandleObjectReachingZeroIsNotServedToAWaiterOfItsOwnKey() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(1).idle(c -> c.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        Session old = a.get();
        assertTrue(a.invalidate());
        CompletableFuture<Handle<Session>> again = acquireAsync(pool, "a");
        awaitWaiters(pool, 1);
        TestKit.forkRun("releaser", () -> closeAttached(pool, a)).join();
        Handle<Session> fresh = get(again);
        assertNotSame(old, fresh.get(), "the waiter was served the retired object");
        closeAttached(pool, fresh);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void anObjectPastItsLifetimeReachingZeroIsNotServedToAWaiterOfItsOwnKey() throws Exception {
        Engine engine = new Engine();
        java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .maxObjects(1)
                .ticker(now::get)
                .maxLifetime(Duration.ofMinutes(1))
                .idle(c -> c.maximumSize(4)));
        Handle<Session> a = acquireAttached(pool, "a");
        Session old = a.get();
        Handle<Session> b;
        // make a waiter of key a that is in line for capacity: a is live, so first retire it by
        // lifetime-independent means is not possible; instead queue a waiter for b, then for a
        CompletableFuture<Handle<Session>> bWait = acquireAsync(pool, "b");
        awaitWaiters(pool, 1);
        now.addAndGet(Duration.ofMinutes(2).toNanos());
        TestKit.forkRun("releaser", () -> closeAttached(pool, a)).join(); // past its lifetime at 0: LIFETIME
        b = get(bWait);
        assertTrue(old.isDisposed());
        closeAttached(pool, b);
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 20. Executors that drop tasks (Caffeine/HikariCP: a rejected or dropped executor task strands
    //     the resource): a callAsync whose function the executor never runs, then cancelled.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCallAsyncWhoseExecutorDropsTheTaskGivesEverythingBackWhenCancelled(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        List<Runnable> dropped = new CopyOnWriteArrayList<>();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1).callExecutor(dropped::add));
        CancellationSource source = new CancellationSource();
        CompletableFuture<String> call =
                pool.callAsync("a", source.token(), s -> s.key).toCompletableFuture();
        eventually().until(() -> !dropped.isEmpty());
        source.cancel();
        TestKit.joinedCancellation(call);
        // the gate, the section and the object are free again
        try (Attachment world = pool.stopTheWorld(Duration.ofSeconds(5))) {
            assertTrue(pool.isAttached());
        }
        pool.flush();
        eventually().until(() -> pool.stats().live() == 0);
        assertEquals("a", pool.call("a", Duration.ofSeconds(5), s -> s.key));
        pool.flush();
        assertAllPermitsFree(pool, 1);
        dropped.forEach(Runnable::run); // a task run late must do nothing
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 21. java.util.concurrent ReentrantReadWriteLock / kotlinx Mutex: a writer that gives up while
    //     waiting for readers must not leave later readers blocked.

    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void aStopTheWorldCancelledWhileReadersDrainLetsQueuedAttachesIn(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(mode));
        CountDownLatch readerIn = new CountDownLatch(1);
        CountDownLatch readerOut = new CountDownLatch(1);
        TestKit.Forked<Void> reader = TestKit.forkRun("reader", () -> {
            try (Attachment attached = pool.attach()) {
                readerIn.countDown();
                awaitLatch(readerOut);
            }
        });
        awaitLatch(readerIn);
        CancellationSource source = new CancellationSource();
        TestKit.Forked<Void> writer = TestKit.forkRun("writer", () -> {
            try (Attachment world = pool.stopTheWorld(source.token())) {
                fail("the writer got in while a reader was attached");
            }
        });
        TestKit.awaitParked(writer.thread);
        TestKit.Forked<Boolean> latecomer = TestKit.fork("latecomer", () -> {
            try (Attachment attached = pool.attach()) {
                return true;
            }
        });
        TestKit.awaitParked(latecomer.thread); // queued behind the writer
        source.cancel();
        assertInstanceOf(CancellationException.class, writer.joinFailure());
        assertTrue(latecomer.join(), "the reader queued behind the cancelled writer got in");
        readerOut.countDown();
        reader.join();
        try (Attachment world = pool.stopTheWorld(Duration.ofSeconds(5))) {
            assertTrue(pool.isAttached());
        }
        pool.close();
    }

    // ------------------------------------------------------------------------------------------------
    // 22. HikariCP leak detection / commons-pool abandoned objects: a handle dropped unclosed is
    //     released once (its permit too), its object disposed once, attached.

    @Test
    void aHandleDroppedUnclosedIsReleasedOnceAndItsPermitComesBack() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder()
                .maxObjects(1)
                .leakDetection(LeakDetection.PARANOID)
                .drainDelay(Duration.ofMillis(1)));
        dropAHandle(pool);
        eventually().until(() -> {
            System.gc();
            pool.flush();
            return pool.stats().leaks() == 1
                    && pool.stats().live() == 0
                    && engine.errors(PoolError.Kind.HANDLE_LEAKED).size() == 1;
        });
        assertEquals(1, engine.errors(PoolError.Kind.HANDLE_LEAKED).size());
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    private static void dropAHandle(RefPool<String, Session> pool) {
        acquireAttached(pool, "leaked").get();
    }

    // ------------------------------------------------------------------------------------------------
    // 23. commons-pool: two threads returning the same object at once (double return) corrupt the
    //     active count. Here: one handle closed concurrently on two threads, one attached, one not.

    @Test
    void aHandleClosedOnTwoThreadsAtOnceReleasesOneReference() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(2));
        for (int round = 0; round < 50; round++) {
            Handle<Session> h = acquireAttached(pool, "a");
            Handle<Session> keep = pool.attached(h::share);
            CountDownLatch go = new CountDownLatch(1);
            TestKit.Forked<Void> one = TestKit.forkRun("one", () -> {
                awaitLatch(go);
                closeAttached(pool, h);
            });
            TestKit.Forked<Void> two = TestKit.forkRun("two", () -> {
                awaitLatch(go);
                h.close();
            });
            go.countDown();
            one.join();
            two.join();
            pool.flush();
            Session s = keep.get();
            assertFalse(s.isDisposed(), "round " + round + ": the shared handle's reference was taken too");
            closeAttached(pool, keep);
            assertTrue(s.isDisposed());
        }
        assertAllPermitsFree(pool, 2);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 24. commons-pool / go-commons-pool #25 again, with an Error (e.g. NoClassDefFoundError, as in
    //     Stormpot #215) from the factory of a waiter granted its permit on another thread.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aGrantedWaitersFactoryErrorFailsItAndHandsThePermitOn(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        engine.beforeCreate = key -> {
            if (key.equals("b")) {
                throw new NoClassDefFoundError("b's driver");
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<Handle<Session>> b = acquireAsync(pool, "b");
        CompletableFuture<Handle<Session>> c = acquireAsync(pool, "c");
        awaitWaiters(pool, 2);
        TestKit.Forked<Void> releaser = TestKit.forkRun("releaser", () -> closeAttached(pool, a));
        Throwable releaserFailure = null;
        try {
            releaser.join();
        } catch (Throwable t) {
            releaserFailure = t;
        }
        assertInstanceOf(NoClassDefFoundError.class, failure(b));
        Handle<Session> cHandle = get(c);
        closeAttached(pool, cHandle);
        assertEquals(null, releaserFailure, "the releaser's close() threw the waiter's factory error");
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 25. commons-pool testOnBorrow racing close(): a revive check under way when the pool closes.

    @Test
    void aCloseDuringAReviveCheckDisposesTheObjectOnce() throws Exception {
        Engine engine = new Engine();
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        RefPool<String, Session> pool = engine.build(
                engine.builder().maxObjects(2).idle(c -> c.maximumSize(4)).validator((String key, Session s) -> {
                    checking.countDown();
                    awaitLatch(verdict);
                    return true;
                }));
        closeAttached(pool, acquireAttached(pool, "a")); // a idle
        // the check runs on the reviving request's thread, even for acquireAsync
        TestKit.Forked<CompletableFuture<Handle<Session>>> reviver =
                TestKit.fork("reviver", () -> acquireAsync(pool, "a"));
        awaitLatch(checking);
        TestKit.Forked<Void> closer = TestKit.forkRun("closer", pool::close);
        verdict.countDown();
        closer.join();
        CompletableFuture<Handle<Session>> revived = reviver.join();
        try {
            Handle<Session> h = get(revived);
            h.close();
        } catch (ExecutionException e) {
            assertInstanceOf(PoolClosedException.class, e.getCause());
        }
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(1, engine.created.size());
    }

    // ------------------------------------------------------------------------------------------------
    // 26. HikariCP #418 ("a single thread requires more than N connections ... lockup"): a two-key
    //     call needing two objects from a pool of one must fail fast and hold nothing.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aTwoKeyCallInAPoolOfOneFailsFastAndHoldsNothing(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        assertThrows(CapacityExhaustedException.class, () -> pool.call("x", "y", (x, y) -> x.key + y.key));
        pool.flush();
        assertEquals(0, pool.stats().live());
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 27. kotlinx #2233 (withTimeout around acquire loses the permit), for callAsync and for a
    //     nested timed acquire that waits in line with its attachment suspended.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCallAsyncTimingOutInTheCapacityLineLosesNothing(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        CompletableFuture<String> call =
                pool.callAsync("b", Duration.ofMillis(50), s -> s.key).toCompletableFuture();
        assertInstanceOf(io.refpool.sync.WaitTimeoutException.class, failure(call));
        Throwable timed;
        try (Attachment outer = pool.attach()) {
            timed = assertThrows(
                    io.refpool.sync.WaitTimeoutException.class, () -> pool.acquire("c", Duration.ofMillis(50)));
            assertTrue(pool.isAttached(), "still attached after the timed wait");
        }
        assertTrue(timed.getMessage().contains("'c'"), timed.getMessage());
        closeAttached(pool, a);
        assertEquals(0, pool.stats().capacityWaiters());
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    /** A callAsync cancelled while it waits for the object's section gives back object and gate. */
    @Test
    void aCallAsyncCancelledWhileWaitingForTheSectionGivesEverythingBack() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a = acquireAttached(pool, "a");
        Guard held = get(a.sectionAsync(CancellationToken.none()).toCompletableFuture());
        CancellationSource source = new CancellationSource();
        CompletableFuture<String> call =
                pool.callAsync("a", source.token(), s -> s.key).toCompletableFuture();
        source.cancel();
        TestKit.joinedCancellation(call);
        held.close();
        try (Attachment world = pool.stopTheWorld(Duration.ofSeconds(5))) {
            assertTrue(pool.isAttached());
        }
        assertEquals("a", pool.call("a", Duration.ofSeconds(5), s -> s.key));
        closeAttached(pool, a);
        pool.flush();
        assertEquals(0, pool.stats().live());
        assertAllPermitsFree(pool, 1);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    // ------------------------------------------------------------------------------------------------
    // 28. HikariCP shutdown aborting in-use connections / commons-pool close while borrowed: a bounded
    //     close interrupts a running call; its object must be disposed once, only after the call
    //     returned, and a capacity waiter must be failed, not stranded.

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aBoundedCloseInterruptsARunningCallAndDisposesItsObjectOnlyAfterIt(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch stop = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean inside = new java.util.concurrent.atomic.AtomicBoolean();
        List<String> disposedWhileInside = new CopyOnWriteArrayList<>();
        engine.afterDispose = s -> {
            if (inside.get()) {
                disposedWhileInside.add(s.toString());
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1).interrupter((String key, Session s) -> {
                    stop.countDown();
                    return Interrupter.Outcome.RETIRE;
                }));
        TestKit.Forked<String> call = TestKit.fork(
                "call",
                () -> pool.call("a", Duration.ofSeconds(30), s -> {
                    inside.set(true);
                    running.countDown();
                    awaitLatch(stop);
                    inside.set(false);
                    return s.key;
                }));
        awaitLatch(running);
        CompletableFuture<Handle<Session>> waiter = acquireAsync(pool, "b");
        if (mode != AttachMode.GLOBAL) {
            awaitWaiters(pool, 1); // in GLOBAL mode it waits for the gate the call holds
        }
        pool.close(Duration.ofMillis(100)); // true or false: the interrupted call may return before the limit check
        assertInstanceOf(PoolClosedException.class, failure(waiter));
        assertEquals("a", call.join(), "the function returned normally after the interrupter");
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(List.of(), disposedWhileInside);
        assertEquals(
                1,
                pool.stats().disposals(DisposalCause.INTERRUPTED)
                        + pool.stats().disposals(DisposalCause.CLOSED)
                        + pool.stats().disposals(DisposalCause.RELEASED));
    }
}
