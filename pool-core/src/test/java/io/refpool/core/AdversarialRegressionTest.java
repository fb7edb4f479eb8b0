package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * One regression test per defect that an adversarial run found in the pool layer. Each forces its
 * interleaving or fault (hooks at named points, latches, throwing callbacks) and fails without the
 * fix it guards.
 */
class AdversarialRegressionTest {
    private final TestResources resources = new TestResources();

    private static TestPoolHooks hooks(RefPool<?, ?> pool) {
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        return hooks;
    }

    private static Handle<Resource> acquireAttached(RefPool<String, Resource> pool, String key) {
        try (Attachment attached = pool.attach()) {
            return pool.acquire(key);
        }
    }

    /** Defect 1: Caffeine calls the eviction listener before it removes the entry. */
    @Test
    void anEvictionDrainedWhileTheCacheStillHoldsTheEntryDisposesTheObject() throws Exception {
        ExecutorService maintenance = Executors.newSingleThreadExecutor();
        try {
            RefPool<String, Resource> pool = resources.build(resources
                    .builder()
                    .maxObjects(1)
                    .drainDelay(Duration.ofHours(1))
                    .idle(cache -> cache.maximumSize(0).executor(maintenance)));
            TestPoolHooks.Pause listening = hooks(pool).pause(Point.EVICTION_QUEUED, null);
            // idles, and the cache evicts it: in the put's own maintenance (over its bound of 0) or on
            // its maintenance thread; either way the listener runs inside the cache's eviction
            Forked<Void> idler = forkRun("idler", () -> {
                try (Attachment attached = pool.attach()) {
                    pool.acquire("a").close();
                }
            });
            listening.awaitArrival(); // the listener queued the eviction; the cache still holds the entry

            Forked<Void> drainer = forkRun("drainer", () -> pool.attach().close());
            // the drain passed its decision: it finished, or it claimed the object and now waits
            // for the cache's entry lock to take the object out
            eventually().until(() -> !drainer.thread.isAlive() || drainer.thread.getState() == Thread.State.BLOCKED);
            listening.proceed();
            drainer.join();
            idler.join();

            assertEquals(1, resources.disposalCount(), "the evicted object was disposed, not stranded");
            try (Attachment attached = pool.attach();
                    Handle<Resource> b = pool.acquire("b")) {
                assertEquals("b", b.get().key, "its permit went back to the pool");
            }
            pool.close();
            resources.assertAllDisposedOnceAttached();
        } finally {
            maintenance.shutdownNow();
        }
    }

    /** Defect 2: an attached acquire waited for another thread's creation while holding the gate. */
    @Test
    void anAcquirerOfAKeyBeingCreatedGivesTheGateUpForAFactoryThatDetaches() throws Exception {
        AtomicReference<Attachment> creatorAttachment = new AtomicReference<>();
        CountDownLatch inDetachedWork = new CountDownLatch(1);
        CountDownLatch finishWork = new CountDownLatch(1);
        RefPool<String, String> pool = RefPool.builder((String key) -> {
                    Attachment creator = creatorAttachment.getAndSet(null);
                    if (creator == null) {
                        return "object of " + key;
                    }
                    return creator.detached(
                            () -> { // the first creation does blocking work detached
                                inDetachedWork.countDown();
                                await(finishWork);
                                return "object of " + key;
                            });
                })
                .attachMode(AttachMode.GLOBAL)
                .build();

        Forked<String> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach()) {
                creatorAttachment.set(attached);
                try (Handle<String> handle = pool.acquire("k")) {
                    return handle.get();
                }
            }
        });
        await(inDetachedWork);
        Forked<String> second = fork("second acquirer", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        awaitParked(second.thread); // waiting for the creation
        finishWork.countDown();

        assertEquals("object of k", creator.join());
        assertEquals("object of k", second.join());
        pool.close();
    }

    /** Defect 3: an executor failure other than a rejection escaped close() and disarmed the drainer. */
    @Test
    void anExecutorErrorNeitherEscapesHandleCloseNorDisarmsTheDrainer() throws Exception {
        AtomicInteger submissions = new AtomicInteger();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1)
                .executor(task -> {
                    if (submissions.incrementAndGet() == 1) {
                        throw new InternalError("unable to create native thread"); // an Error, not a rejection
                    }
                    Thread thread = new Thread(task, "drainer");
                    thread.setDaemon(true);
                    thread.start();
                }));
        Handle<Resource> a = acquireAttached(pool, "a");
        forkRun("releaser", a::close).join(); // does not throw the executor's Error
        assertEquals(1, resources.disposalCount(), "the failed hand-off drained on the releasing thread");

        Handle<Resource> b = acquireAttached(pool, "b");
        forkRun("releaser", b::close).join();
        eventually().until(() -> resources.disposalCount() == 2); // the drainer is still armed
        assertEquals(0, pool.stats().pendingDecrements());
        assertTrue(resources.errors.stream().anyMatch(e -> e.kind() == PoolError.Kind.DRAINER_FAILED));
        resources.errors.clear();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** Defect 4: a caller-runs executor ran the delayed drain on the JDK's timer thread, parked on the gate. */
    @Test
    void aCallerRunsExecutorNeverParksTheJdkTimerThreadOnTheGate() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.GLOBAL)
                .drainDelay(Duration.ofMillis(10))
                .executor(Runnable::run));
        Handle<Resource> handle = acquireAttached(pool, "a");
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        Forked<Void> holder = forkRun("gate holder", () -> {
            try (Attachment attached = pool.attach()) {
                holding.countDown();
                await(letGo);
            }
        });
        await(holding);
        forkRun("releaser", handle::close).join(); // arms the delayed drain while the gate is held

        // a timer of somebody else's, due after the drain's: it runs only if the timer thread is free
        CompletableFuture<Void> otherTimer = new CompletableFuture<>();
        CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS).execute(() -> otherTimer.complete(null));
        otherTimer.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals(0, resources.disposalCount(), "the drain waits for the gate without a thread");

        letGo.countDown();
        holder.join();
        eventually().until(() -> resources.disposalCount() == 1);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** Defect 5: drains parked the shared drainer threads on busy gates, starving other pools. */
    @Test
    void poolsWithBusyGatesDoNotStarveAnotherPoolsDrainOnTheSharedThreads() throws Exception {
        List<RefPool<String, Resource>> busy = new ArrayList<>();
        CountDownLatch letGo = new CountDownLatch(1);
        List<Forked<Void>> holders = new ArrayList<>();
        for (int i = 0; i < 6; i++) { // more busy pools than the shared drainer has threads
            RefPool<String, Resource> pool =
                    new TestResources().builder().drainThreshold(1).build();
            busy.add(pool);
            Handle<Resource> handle;
            try (Attachment attached = pool.attach()) {
                handle = pool.acquire("k");
            }
            CountDownLatch holding = new CountDownLatch(1);
            holders.add(forkRun("holder " + i, () -> {
                try (Attachment attached = pool.attach()) {
                    holding.countDown();
                    await(letGo);
                }
            }));
            await(holding);
            forkRun("releaser " + i, handle::close).join(); // an urgent drain for a busy gate
        }

        RefPool<String, Resource> free = resources.build(resources.builder().drainThreshold(1));
        Handle<Resource> handle = acquireAttached(free, "a");
        forkRun("releaser", handle::close).join();
        try {
            eventually().until(() -> resources.disposalCount() == 1); // drained by a shared thread
        } finally {
            letGo.countDown();
        }
        for (Forked<Void> holder : holders) {
            holder.join();
        }
        for (RefPool<String, Resource> pool : busy) {
            eventually().until(() -> pool.stats().pendingDecrements() == 0);
            pool.close();
        }
        free.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** Defect 6: the token of acquireAsync did not end a wait for another thread's creation. */
    @Test
    void acquireAsyncsTokenEndsAWaitForAnotherThreadsCreation() throws Exception {
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        RefPool<String, String> pool = RefPool.builder((String key) -> {
                    creating.countDown();
                    await(finish);
                    return "object of " + key;
                })
                .attachMode(AttachMode.SHARED)
                .build();
        Forked<String> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        await(creating);
        CancellationSource source = new CancellationSource();
        CompletableFuture<Handle<String>> waiting =
                pool.acquireAsync("k", source.token()).toCompletableFuture();
        assertFalse(waiting.isDone(), "it waits for the creation");

        source.cancel();
        assertTrue(waiting.isDone(), "cancelling the token ends the wait at once");
        TestKit.joinedCancellation(waiting); // a cancellation, read as one on every JDK

        finish.countDown();
        assertEquals("object of k", creator.join());
        assertEquals(0, pool.stats().live(), "the cancelled wait took no reference");
        pool.close();
    }

    /**
     * Defect 7: a capacity waiter's continuation, granted on the thread of an attached creator that
     * evicted an idle object for a permit, ran nested there and took the creator's in-flight creation
     * for a factory acquiring its own key.
     */
    @Test
    void aCapacityWaiterGrantedOnACreatorsThreadWaitsForThatCreationInsteadOfFailing() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .maxObjects(1)
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(10).executor(Runnable::run)));
        TestPoolHooks hooks = hooks(pool);
        CountDownLatch acquired = new CountDownLatch(1);
        CountDownLatch closeIt = new CountDownLatch(1);
        Forked<Void> releaser = unstartedRun("releaser", () -> {
            try (Attachment attached = pool.attach()) {
                Handle<Resource> x = pool.acquire("x");
                acquired.countDown();
                await(closeIt);
                x.close(); // count 0: on its way to the idle cache
            }
        });
        TestPoolHooks.Pause beforePut = hooks.pause(Point.BEFORE_IDLE_PUT, releaser.thread);
        TestPoolHooks.Pause afterPut = hooks.pause(Point.AFTER_IDLE_PUT, releaser.thread);
        releaser.start();
        await(acquired);
        closeIt.countDown();
        beforePut.awaitArrival(); // it saw nobody in line and will idle the object

        AtomicReference<CompletionStage<Handle<Resource>>> waiting = new AtomicReference<>();
        Forked<Void> waiter =
                unstartedRun("waiter", () -> waiting.set(pool.acquireAsync("k", CancellationToken.none())));
        TestPoolHooks.Pause queued = hooks.pause(Point.CAPACITY_QUEUED, waiter.thread);
        waiter.start();
        queued.awaitArrival(); // in line for capacity, not yet reclaiming idle objects

        beforePut.proceed();
        afterPut.awaitArrival(); // "x" is idle in the cache, its releaser not yet looking at the line

        Forked<Resource> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Handle<Resource> k = pool.acquire("k")) { // evicts "x"; its permit goes to the waiter
                return k.get();
            }
        });
        // the permit went to the waiter (FIFO), granted on the creator's thread, which created "k"
        // once the creator gave its own creation up; the creator then shares that object
        assertEquals("k", creator.join().key);
        afterPut.proceed();
        queued.proceed();
        releaser.join();
        waiter.join();

        Handle<Resource> handle = waiting.get().toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals("k", handle.get().key);
        try (Attachment attached = pool.attach()) {
            handle.close();
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** Defect 8: an attached acquire refused for capacity while evicted objects awaited disposal. */
    @Test
    void anAttachedAcquireAppliesQueuedEvictionsBeforeRefusingForCapacity() {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .maxObjects(1)
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(0).executor(Runnable::run)));
        try (Attachment attached = pool.attach()) {
            pool.acquire("a").close(); // idled and evicted at once; its disposal is queued
            assertEquals(1, pool.stats().pendingDecrements());
            try (Handle<Resource> b = pool.acquire("b")) {
                assertEquals("b", b.get().key);
            }
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** Defect 9: a key whose toString throws, under leak tracking, leaked a reference and a permit. */
    @Test
    void aKeyWhoseToStringThrowsLeaksNothingUnderLeakTracking() {
        for (LeakDetection mode : List.of(LeakDetection.PARANOID, LeakDetection.SAMPLED)) {
            AtomicInteger created = new AtomicInteger();
            AtomicInteger disposed = new AtomicInteger();
            RefPool<Object, String> pool = RefPool.builder((Object key) -> "object " + created.incrementAndGet())
                    .disposer(value -> disposed.incrementAndGet())
                    .maxObjects(1)
                    .leakDetection(mode)
                    .errorListener(error -> {})
                    .build();
            Object hostile = new Object() {
                @Override
                public String toString() {
                    throw new IllegalStateException("toString is hostile");
                }
            };
            try (Attachment attached = pool.attach()) {
                for (int i = 0; i < 200; i++) { // SAMPLED tracks one handle in many
                    pool.acquire(hostile).close(); // within maxObjects(1) only if each permit came back
                    assertEquals(0, pool.stats().live(), mode + ": no reference leaked");
                }
                assertEquals(200, created.get(), mode.toString());
                assertEquals(200, disposed.get(), mode + ": each disposed at count zero, its permit given back");
                pool.acquire("other").close();
            }
            pool.close();
            assertEquals(201, disposed.get(), mode.toString());
        }
    }

    /** Defect 10: attachAsync checked for a closed pool before the gate and not after. */
    @Test
    void attachAsyncNeverRunsItsFunctionAfterCloseReturned() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources.builder());
        AtomicBoolean ran = new AtomicBoolean();
        AtomicReference<CompletionStage<Handle<Resource>>> stage = new AtomicReference<>();
        Forked<Void> async = unstartedRun(
                "async attacher",
                () -> stage.set(pool.attachAsync(CancellationToken.none(), a -> {
                    ran.set(true);
                    return pool.acquire("k");
                })));
        TestPoolHooks.Pause checked = hooks(pool).pause(Point.ATTACH_ASYNC_CHECKED, async.thread);
        async.start();
        checked.awaitArrival(); // it found the pool open
        pool.close();
        checked.proceed();
        async.join();

        ExecutionException failure = assertThrows(
                ExecutionException.class,
                () -> stage.get().toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(PoolClosedException.class, failure.getCause());
        assertFalse(ran.get(), "the function did not run after close() returned");
        assertEquals(0, resources.createdCount());
    }

    /** Defect 11: a throwing weigher escaped Handle.close() and stranded the object and its permit. */
    @Test
    void aThrowingWeigherNeverEscapesHandleCloseAndTheObjectIsDisposed() {
        RefPool<String, Resource> pool =
                resources.build(resources.builder().maxObjects(1).idle(cache -> cache.maximumWeight(100)
                        .weigher((key, value) -> {
                            throw new IllegalStateException("the weigher is hostile");
                        })));
        try (Attachment attached = pool.attach()) {
            Handle<Resource> a = pool.acquire("a");
            a.close(); // does not throw
            assertEquals(1, resources.disposalCount(), "disposed instead of idled");
            pool.acquire("b").close(); // the permit came back
        }
        assertEquals(PoolError.Kind.IDLE_CACHE_FAILED, resources.errors.get(0).kind());
        resources.errors.clear();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * Defect 12: per-thread state outlived a closed pool: the closing thread's attach state, and
     * the disposal work list that a large drain grew on a long-lived thread.
     */
    @Test
    void threadsKeepNothingOfAClosedPoolAndNoGrownWorkList() throws Exception {
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try {
            List<WeakReference<?>> kept = useAndClosePool(worker);
            for (int i = 0; i < 200 && kept.stream().anyMatch(ref -> ref.get() != null); i++) {
                System.gc();
                Thread.sleep(10); // the collector's pace, not a race: the bound is the loop
            }
            assertNull(kept.get(0).get(), "the closed pool was collected");
            assertNull(kept.get(1).get(), "the closing thread dropped its attach state of the pool");
            assertNull(kept.get(2).get(), "the worker's work list, grown by a large drain, was let go");
        } finally {
            worker.shutdownNow();
        }
    }

    private List<WeakReference<?>> useAndClosePool(ExecutorService worker) throws Exception {
        RefPool<String, Resource> pool = new TestResources()
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(Integer.MAX_VALUE) // only the worker's attach drains
                .build();
        List<Handle<Resource>> handles = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < 20_000; i++) {
                handles.add(pool.acquire("k" + i));
            }
        }
        Object workList = worker.submit(() -> {
                    handles.forEach(Handle::close); // all deferred
                    Object list = pool.core().threadStateForTests().disposalWorkList();
                    pool.attach().close(); // one drain disposes them all, in this thread's work list
                    return list;
                })
                .get();
        Object closingState = pool.core().threadStateForTests().attachState();
        pool.close();
        return List.of(new WeakReference<>(pool), new WeakReference<>(closingState), new WeakReference<>(workList));
    }

    /**
     * A key's next object is created only after its predecessor's disposer has returned: in SHARED
     * mode an acquire of the key waits (detached) while the disposer runs on another attached thread.
     */
    @Test
    void aKeysNextObjectWaitsUntilItsPredecessorsDisposerReturned() throws Exception {
        CountDownLatch disposing = new CountDownLatch(1);
        CountDownLatch finishDisposal = new CountDownLatch(1);
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(AttachMode.SHARED));
        resources.alsoOnDispose(resource -> {
            if (resource.disposals.get() == 1 && disposing.getCount() == 1) {
                disposing.countDown();
                await(finishDisposal);
            }
        });
        Handle<Resource> first = acquireAttached(pool, "k");
        Resource predecessor = first.get();
        Forked<Void> closer = forkRun("closer", () -> {
            try (Attachment attached = pool.attach()) {
                first.close(); // count 0 with no idle cache: disposed here, slowly
            }
        });
        await(disposing);
        Forked<Resource> next = fork("next", () -> {
            try (Attachment attached = pool.attach();
                    Handle<Resource> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        awaitParked(next.thread);
        assertEquals(1, resources.createdCount(), "no successor while the disposer runs");
        finishDisposal.countDown();
        assertFalse(next.join() == predecessor, "a new object, once the disposer returned");
        closer.join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * close() disposes objects as their last handles close; with leak detection off, a handle that
     * is never closed keeps its object, and close() reports it.
     */
    @Test
    void closeReportsAHandleNeverClosedAndLeavesItsObjectToIt() {
        RefPool<String, Resource> pool = resources.build(resources.builder().leakDetection(LeakDetection.OFF));
        Handle<Resource> kept = acquireAttached(pool, "kept");
        acquireAttached(pool, "never closed"); // dropped open: with OFF, its object stays
        pool.close();
        assertEquals(0, resources.disposalCount(), "nothing is disposed under an open handle");
        assertEquals(
                PoolError.Kind.HANDLES_OPEN_AT_CLOSE, resources.errors.get(0).kind());
        kept.close(); // off-attachment: the drainer, which runs at once after close, applies it
        eventually().until(() -> resources.disposalCount() == 1); // disposed when its last handle closed
    }

    /**
     * Found by the soak: a stop-the-world section opened and closed inside a {@code detached()}
     * section must not change how the suspended attachment holds the gate when it resumes, or its
     * detach releases the wrong side of the lock and the gate stays held for ever.
     */
    @Test
    void anExclusiveSectionInsideDetachedLeavesTheResumedAttachmentsHoldIntact() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(AttachMode.SHARED));
        try (Attachment outer = pool.attach()) {
            outer.detached(() -> {
                pool.stopTheWorld().close();
                return null;
            });
        }
        CancellationSource bound = new CancellationSource();
        bound.cancelAfter(Duration.ofSeconds(10));
        try (Attachment stopTheWorld = pool.core().stopTheWorld(bound.token())) {
            assertTrue(pool.isAttached(), "the gate was free for a stop-the-world section");
        } finally {
            bound.close();
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** The pool's closed state wins over "attach first" in an unattached acquire's message. */
    @Test
    void anUnattachedAcquireOnAClosedPoolSaysThePoolIsClosed() {
        RefPool<String, Resource> pool = resources.build(resources.builder());
        pool.close();
        assertThrows(PoolClosedException.class, () -> pool.acquire("k"));
    }

    /** A checked factory exception reaches the creator and every waiter in one shape. */
    @Test
    void aCheckedFactoryExceptionReachesCreatorAndWaitersAsObjectCreationException() throws Exception {
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch fail = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        RefPool<String, String> pool = RefPool.builder((String key) -> {
                    if (calls.incrementAndGet() == 1) {
                        creating.countDown();
                        await(fail);
                        throw sneaky(new IOException("engine unreachable"));
                    }
                    return "object of " + key;
                })
                .attachMode(AttachMode.SHARED)
                .errorListener(error -> {})
                .build();
        Forked<String> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        await(creating);
        Forked<String> waiter = fork("waiter", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        CompletableFuture<Handle<String>> asyncWaiter =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        awaitParked(waiter.thread);
        fail.countDown();

        for (Throwable failure : List.of(
                creator.joinFailure(),
                waiter.joinFailure(),
                assertThrows(ExecutionException.class, asyncWaiter::get).getCause())) {
            assertInstanceOf(ObjectCreationException.class, failure);
            assertInstanceOf(IOException.class, failure.getCause());
        }
        try (Attachment attached = pool.attach();
                Handle<String> handle = pool.acquire("k")) {
            assertEquals("object of k", handle.get(), "the next acquire retries");
        }
        pool.close();
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("a latch was never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CompletionException(e);
        }
    }
}
