package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Lifecycle control a host runs a pool with for months: {@code flush()}, {@code invalidate(key)},
 * {@code clearIdle()} and {@code Handle.key()}. Each race named by the contract is forced with
 * latches or the pool's hooks; every object is disposed exactly once, attached.
 */
class LifecycleControlTest {
    private final TestResources resources = new TestResources();

    /** A {@code SHARED} pool with no drainer activity: only attaches and flushes apply releases. */
    private RefPool<String, Resource> pool(boolean idleCache) {
        RefPool.Builder<String, Resource> builder =
                resources.builder().attachMode(AttachMode.SHARED).drainDelay(Duration.ofHours(1));
        if (idleCache) {
            builder.idle(cache -> cache.maximumSize(10).executor(Runnable::run));
        }
        return resources.build(builder);
    }

    /** A {@code PER_OBJECT} pool with no drainer activity, as {@link #pool} is for {@code SHARED}. */
    private RefPool<String, Resource> perObjectPool() {
        return resources.build(
                resources.builder().attachMode(AttachMode.PER_OBJECT).drainDelay(Duration.ofHours(1)));
    }

    /** {@return a thread that flushes inside the section of "b"}, holding the section and its hold */
    private static TestKit.Forked<Void> forkFlushInsideTheSectionOfB(RefPool<String, Resource> pool) {
        return forkRun(
                "section's flusher",
                () -> pool.call("b", b -> {
                    pool.flush();
                    return null;
                }));
    }

    private static TestPoolHooks hooks(RefPool<?, ?> pool) {
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        return hooks;
    }

    private static void await(CountDownLatch latch) {
        TestKeyedPoolFixtures.awaitLatch(latch);
    }

    // ---------------------------------------------------------------- flush

    @Test
    void flushAppliesAReleaseAnotherThreadClosedOffTheAttachment() throws Exception {
        RefPool<String, Resource> pool = pool(false);
        Handle<Resource> handle = pool.attached(() -> pool.acquire("a"));
        forkRun("closer", handle::close).join(); // a detached close: a pending release, then returns
        assertEquals(1, pool.stats().pendingDecrements());
        assertEquals(0, resources.disposalCount(), "nothing applied it yet");

        pool.flush();
        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(1, resources.disposalCount(), "applied: count 0 with no idle cache disposes it");
        assertFalse(pool.isAttached(), "flush attached only for its own work");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void flushAfterCloseAppliesTheReleasesOfHandlesClosedSince() throws Exception {
        List<Runnable> heldDrains = new CopyOnWriteArrayList<>();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .executor(heldDrains::add)); // takes drains and runs none until the test does
        Handle<Resource> handle = pool.attached(() -> pool.acquire("a"));
        pool.close(); // "a" stays: its handle is open
        forkRun("closer", handle::close).join(); // after the close: pending, its drain held by the executor
        assertEquals(0, resources.disposalCount(), "nothing applied it yet");
        assertFalse(heldDrains.isEmpty(), "a drain was handed over");

        pool.flush();
        assertEquals(1, resources.disposalCount(), "flush applied it");
        assertEquals(0, pool.stats().pendingDecrements());
        assertFalse(pool.isAttached());
        heldDrains.forEach(Runnable::run); // the drains find nothing left
        assertEquals(
                List.of(PoolError.Kind.HANDLES_OPEN_AT_CLOSE),
                resources.errors.stream().map(PoolError::kind).toList());
        resources.errors.clear();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * After close a flush waits for the gate as a drain does, but interruptibly: here a drain after
     * the close holds the one gate inside a disposer, and the flush waiting for it is interrupted.
     */
    @Test
    void aFlushAfterCloseWaitingForTheGateCanBeInterrupted() throws Exception {
        List<Runnable> heldDrains = new CopyOnWriteArrayList<>();
        CountDownLatch disposing = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        resources.alsoOnDispose(resource -> {
            disposing.countDown();
            await(finish); // the drain holds the gate meanwhile
        });
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.GLOBAL)
                .drainDelay(Duration.ofHours(1))
                .executor(heldDrains::add));
        Handle<Resource> handle = pool.attached(() -> pool.acquire("a"));
        pool.close();
        forkRun("closer", handle::close).join(); // after the close: its drain held by the executor
        TestKit.Forked<Void> drainer = forkRun("drainer", () -> heldDrains.forEach(Runnable::run));
        await(disposing);

        TestKit.Forked<Void> flusher = forkRun("flusher", pool::flush);
        awaitParked(flusher.thread);
        flusher.thread.interrupt();
        assertTrue(
                TestKit.joinedFailure(flusher.outcome) instanceof WaitInterruptedException,
                "the flush ends with the interrupt");
        finish.countDown();
        drainer.join();
        assertEquals(1, resources.disposalCount());
        resources.errors.clear(); // the handle open at close was reported
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * {@return a thread that took the batch releasing "a" and is inside its disposer}, held there
     * until {@code finish} opens
     */
    private TestKit.Forked<Void> drainerHeldInItsBatch(RefPool<String, Resource> pool, CountDownLatch finish) {
        CountDownLatch disposing = new CountDownLatch(1);
        resources.alsoOnDispose(resource -> {
            if (resource.key.equals("a")) {
                disposing.countDown();
                await(finish); // the drainer is inside its batch
            }
        });
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        a.close(); // pending
        TestKit.Forked<Void> drainer = forkRun("drainer", () -> pool.attach().close()); // takes the batch
        await(disposing);
        return drainer;
    }

    /** Lets the held drainer finish; the flusher returns, "a" was disposed once, and the pool closes clean. */
    private void finishAndAssertAppliedOnce(
            RefPool<String, Resource> pool,
            CountDownLatch finish,
            TestKit.Forked<Void> flusher,
            TestKit.Forked<Void> drainer)
            throws Exception {
        finish.countDown();
        flusher.join();
        drainer.join();
        assertEquals(1, resources.created("a").disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void flushWaitsForABatchAnotherThreadIsApplying() throws Exception {
        RefPool<String, Resource> pool = pool(false);
        CountDownLatch finish = new CountDownLatch(1);
        TestKit.Forked<Void> drainer = drainerHeldInItsBatch(pool, finish);
        assertEquals(0, pool.stats().pendingDecrements(), "the queue is empty: the batch is out, being applied");

        TestKit.Forked<Void> flusher = forkRun("flusher", pool::flush);
        awaitParked(flusher.thread);
        assertTrue(flusher.thread.isAlive(), "flush waits for the batch the drainer took before it");
        finishAndAssertAppliedOnce(pool, finish, flusher, drainer);
    }

    /**
     * Two flushes wait for the same batch: one of its own (it waits with the gate given up) and one
     * inside an object's section (it waits holding its shared hold, as a section holder must);
     * then a {@code stopTheWorld()} queues for that hold. Flushes take no lock of their own, so
     * when the batch is applied the section's flush returns, the stop goes through, and the other
     * flush takes the gate back after it. With a flush lock, the section's flush waited for it
     * holding its hold, and the lock's holder, taking the gate back, waited behind the stop: for
     * ever.
     */
    @Test
    void flushesWaitingForTheSameBatchInEachWayHoldNoStopBack() throws Exception {
        RefPool<String, Resource> pool = perObjectPool();
        CountDownLatch finish = new CountDownLatch(1);
        TestKit.Forked<Void> drainer = drainerHeldInItsBatch(pool, finish);
        TestKit.Forked<Void> own = forkRun("own flusher", pool::flush);
        awaitParked(own.thread);
        TestKit.Forked<Void> nested = forkFlushInsideTheSectionOfB(pool);
        awaitParked(nested.thread);
        TestKit.Forked<Void> stopper =
                forkRun("stopper", () -> pool.stopTheWorld().close());
        awaitParked(stopper.thread); // queued for the nested flush's hold
        finish.countDown();
        drainer.join();
        nested.join();
        stopper.join(); // bounded: a deadlock fails here
        own.join();
        assertEquals(1, resources.created("a").disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void flushFromADisposerAppliesWhatIsQueuedWithoutWaitingForItself() {
        RefPool<String, Resource> pool = pool(false);
        AtomicInteger flushed = new AtomicInteger();
        resources.alsoOnDispose(resource -> {
            if (resource.key.equals("a")) {
                pool.flush(); // inside the batch that runs this disposer
                flushed.incrementAndGet();
            }
        });
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        Handle<Resource> b = pool.attached(() -> pool.acquire("b"));
        a.close();
        b.close();
        pool.flush();
        assertEquals(1, flushed.get());
        assertEquals(2, resources.disposalCount());
        pool.close();
        pool.flush(); // a closed pool has nothing pending: a no-op
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aDisposersFlushDoesNotWaitForAnotherThreadsFlushThatWaitsForItsBatch() throws Exception {
        for (AttachMode mode : new AttachMode[] {AttachMode.SHARED, AttachMode.PER_OBJECT}) {
            TestResources resources = new TestResources();
            RefPool<String, Resource> pool =
                    resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
            CountDownLatch disposing = new CountDownLatch(1);
            CountDownLatch flushNow = new CountDownLatch(1);
            resources.alsoOnDispose(resource -> {
                if (resource.key.equals("a")) {
                    disposing.countDown();
                    await(flushNow); // the other flusher holds the flush lock and waits for this batch
                    pool.flush();
                }
            });
            Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
            forkRun("closer", a::close).join(); // pending
            TestKit.Forked<Void> drainer =
                    forkRun("drainer", () -> pool.attach().close()); // takes the batch
            await(disposing);
            TestKit.Forked<Void> flusher = forkRun("flusher", pool::flush);
            awaitParked(flusher.thread);
            flushNow.countDown();
            drainer.join(); // bounded: a deadlock fails here
            flusher.join();
            assertEquals(1, resources.created("a").disposals.get(), mode.toString());
            pool.close();
            resources.assertAllDisposedOnceAttached();
        }
    }

    @Test
    void anInterruptedFlushStopsWaitingKeepsTheFlagAndLosesNothing() throws Exception {
        RefPool<String, Resource> pool = pool(false);
        CountDownLatch finish = new CountDownLatch(1);
        TestKit.Forked<Void> drainer = drainerHeldInItsBatch(pool, finish);
        TestKit.Forked<Boolean> flusher = fork("flusher", () -> {
            assertThrows(WaitInterruptedException.class, pool::flush);
            return Thread.currentThread().isInterrupted();
        });
        awaitParked(flusher.thread);
        flusher.thread.interrupt();
        assertTrue(flusher.join(), "the interrupt status is kept");
        finish.countDown();
        drainer.join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * A flush interrupted while it waits for another thread's batch leaves that batch out; the
     * next flush must still wait for it, since it was taken before that flush was called. Before,
     * the second flush started the epoch the batch was counted in, waited only for the other one,
     * and returned with the release not applied.
     */
    @Test
    void aFlushAfterAnInterruptedOneStillWaitsForTheBatchTakenBeforeIt() throws Exception {
        RefPool<String, Resource> pool = pool(false);
        CountDownLatch finish = new CountDownLatch(1);
        TestKit.Forked<Void> drainer = drainerHeldInItsBatch(pool, finish);
        TestKit.Forked<Void> interrupted = fork("interrupted flusher", () -> {
            assertThrows(WaitInterruptedException.class, pool::flush);
            return null;
        });
        awaitParked(interrupted.thread);
        interrupted.thread.interrupt();
        interrupted.join();

        TestKit.Forked<Void> flusher = forkRun("flusher", pool::flush);
        Awaitility.await("the second flush parks or returns")
                .atMost(Duration.ofSeconds(30))
                .until(() -> flusher.outcome.isDone() || flusher.thread.getState() == Thread.State.WAITING);
        assertFalse(flusher.outcome.isDone(), "flush returned while a batch taken before it was still out");
        finishAndAssertAppliedOnce(pool, finish, flusher, drainer);
    }

    /**
     * A thread applying a batch gives the gate up inside it (its disposer opens a {@code detached()}
     * section, as a disposer may); a flush of its own then waits for that batch, and a {@code
     * stopTheWorld()} is queued after the flush. The flush waits with the gate given up, so the stop
     * goes through and the batch's thread takes the gate back. Before, the flush waited holding the
     * gate: in {@code GLOBAL} mode the batch's thread needed that very gate back; in the shared
     * modes it queued behind the stop, which waited for the flush's shared hold. Each waited for
     * the next for ever, and every later attach with them.
     */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aFlushWaitingForABatchWhoseThreadGaveTheGateUpGivesItUpToo(AttachMode mode) throws Exception {
        flushWaitingForABatchWhoseThreadGaveTheGateUp(mode, RefPool::flush);
    }

    /**
     * The same in {@code GLOBAL} mode with the flush nested in the caller's attachment: it gives the
     * one gate up around its wait, as a factory does, and takes it back at the same depth. (In the
     * shared modes a nested flush waits holding its hold, so that {@code close()} and {@code
     * stopTheWorld()} still wait for it; {@code RefPool.flush()} says what that rules out.)
     */
    @Test
    void aNestedGlobalFlushWaitingForABatchWhoseThreadGaveTheGateUpGivesItUpToo() throws Exception {
        flushWaitingForABatchWhoseThreadGaveTheGateUp(
                AttachMode.GLOBAL,
                pool -> pool.runAttached(() -> {
                    pool.flush();
                    assertTrue(pool.isAttached(), "the flush took the gate back at the same depth");
                }));
    }

    /**
     * A flush inside an object's section keeps its hold while it waits: a section holder never
     * waits for the gate. Here a second thread waits for that section (holding its own hold) and a
     * {@code stopTheWorld()} queues behind both holds. Had the flush given the gate up, it would take
     * it back behind the stop, which waits for the section's waiter, which waits for the flush.
     */
    @Test
    void aFlushInsideASectionWaitsHoldingTheGate() throws Exception {
        RefPool<String, Resource> pool = perObjectPool();
        CountDownLatch finish = new CountDownLatch(1);
        TestKit.Forked<Void> drainer = drainerHeldInItsBatch(pool, finish);
        TestKit.Forked<Void> flusher = forkFlushInsideTheSectionOfB(pool);
        awaitParked(flusher.thread);
        TestKit.Forked<Void> waiter = forkRun("section's waiter", () -> pool.call("b", b -> null));
        awaitParked(waiter.thread);
        TestKit.Forked<Void> stopper =
                forkRun("stopper", () -> pool.stopTheWorld().close());
        awaitParked(stopper.thread);
        finish.countDown();
        drainer.join();
        flusher.join(); // bounded: a deadlock fails here
        waiter.join();
        stopper.join();
        assertEquals(1, resources.created("a").disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    private void flushWaitingForABatchWhoseThreadGaveTheGateUp(
            AttachMode mode, Consumer<RefPool<String, Resource>> flush) throws Exception {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool =
                resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        CountDownLatch detached = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        resources.alsoOnDispose(resource -> {
            if (resource.key.equals("a")) {
                try (Attachment attachment = pool.attach()) {
                    attachment.detached(() -> {
                        detached.countDown();
                        await(finish); // the gate is free meanwhile
                        return null;
                    });
                }
            }
        });
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        forkRun("closer", a::close).join(); // pending
        TestKit.Forked<Void> drainer = forkRun("drainer", () -> pool.attach().close()); // takes the batch
        await(detached);
        TestKit.Forked<Void> flusher = forkRun("flusher", () -> flush.accept(pool));
        awaitParked(flusher.thread);
        TestKit.Forked<Void> stopper =
                forkRun("stopper", () -> pool.stopTheWorld().close());
        Awaitility.await()
                .atMost(TestKit.BOUND)
                .until(() -> !stopper.thread.isAlive()
                        || stopper.thread.getState() == Thread.State.WAITING); // through, or queued
        finish.countDown();
        drainer.join(); // bounded: a deadlock fails here
        flusher.join();
        stopper.join();
        assertEquals(1, resources.created("a").disposals.get());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    // ---------------------------------------------------------------- invalidate

    @Test
    void invalidateRetiresTheObjectHoldersKeepItAndItGoesWithTheLastHandle() {
        RefPool<String, Resource> pool = pool(true);
        try (Attachment attached = pool.attach()) {
            Handle<Resource> holder = pool.acquire("a");
            Resource old = holder.get();
            assertTrue(pool.invalidate("a"));
            assertFalse(pool.invalidate("a"), "retired already: the key has no current object");

            assertSame(old, holder.get(), "a holder keeps using the retired object");
            Handle<Resource> second = holder.share();
            try (Handle<Resource> fresh = pool.acquire("a")) {
                assertNotSame(old, fresh.get(), "a new acquire gets a new object");
                assertEquals("a", fresh.key());
            }
            holder.close();
            assertEquals(0, old.disposals.get(), "a share of the retired object still holds it");
            second.close();
            assertEquals(1, old.disposals.get(), "its last handle closed: disposed, not idled");
            assertTrue(old.disposedAttached);
            assertEquals(1, pool.stats().idle(), "only the new object idles");
            assertFalse(pool.invalidate("missing"), "nothing to retire");
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void invalidatingAnIdleObjectDisposesItAtOnceAndTakesItOutOfTheCache() {
        RefPool<String, Resource> pool = pool(true);
        pool.attached(() -> {
            pool.acquire("a").close();
            return null;
        });
        Resource old = resources.created("a");
        assertEquals(1, pool.stats().idle());
        assertTrue(pool.invalidate("a"), "invalidate attaches as needed");
        assertEquals(1, old.disposals.get());
        assertEquals(0, pool.stats().idle());
        assertEquals(0, pool.core().control().cachedCount(), "out of the cache too");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void anInvalidationRacingTheLastCloseDisposesTheObjectOnceAndLeavesNothingCached() throws Exception {
        RefPool<String, Resource> pool = pool(true);
        TestPoolHooks hooks = hooks(pool);
        Handle<Resource> handle = pool.attached(() -> pool.acquire("a"));
        Resource old = resources.created("a");
        TestKit.Forked<Void> releaser = TestKit.unstartedRun(
                "releaser",
                () -> pool.attached(() -> {
                    handle.close(); // count 0, not retired yet: on its way into the cache
                    return null;
                }));
        TestPoolHooks.Pause beforePut = hooks.pause(Point.BEFORE_IDLE_PUT, releaser.thread);
        releaser.start();
        beforePut.awaitArrival();

        assertTrue(pool.invalidate("a"), "count 0: the invalidation claims and disposes it");
        assertEquals(1, old.disposals.get());
        beforePut.proceed(); // the put lands after the claim and sees it: the entry comes out again
        releaser.join();
        assertEquals(1, old.disposals.get(), "once");
        assertEquals(0, pool.stats().idle());
        assertEquals(0, pool.core().control().cachedCount(), "no disposed object stays cached");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    // ---------------------------------------------------------------- clearIdle

    @Test
    void clearIdleDisposesIdleObjectsAndLeavesLiveOnesAlone() {
        RefPool<String, Resource> pool = pool(true);
        Handle<Resource> live = pool.attached(() -> {
            pool.acquire("idle-1").close();
            pool.acquire("idle-2").close();
            return pool.acquire("live");
        });
        assertEquals(2, pool.stats().idle());
        assertEquals(2, pool.clearIdle());
        assertEquals(1, resources.created("idle-1").disposals.get());
        assertEquals(1, resources.created("idle-2").disposals.get());
        assertEquals(0, resources.created("live").disposals.get(), "in use: left alone");
        assertEquals(0, pool.stats().idle());
        assertEquals(0, pool.core().control().cachedCount(), "the cache let go of both");
        assertEquals(1, pool.stats().live());
        assertEquals(0, pool.clearIdle(), "nothing idle left");

        pool.attached(() -> {
            live.close(); // idles again, into the cache
            return null;
        });
        assertEquals(1, pool.stats().idle());
        pool.close();
        resources.assertAllDisposedOnceAttached();
        assertThrows(PoolClosedException.class, pool::clearIdle);
        assertThrows(PoolClosedException.class, () -> pool.invalidate("live"));
    }
}
