package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.ReleaseQueueHooks.Point;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The drainer: releases pending with nobody attaching are applied on the pool's executor once the
 * drain delay has passed, and at once (handed to the executor by the enqueue that crosses it) past
 * the drain threshold. The drainer attaches like anyone else, so it waits for the gate and applies
 * each release exactly once even when an attach got there first.
 */
class DrainerTest {
    private final TestResources resources = new TestResources();

    /** An executor that only collects its tasks, so a test decides when (and whether) they run. */
    private static final class HeldTasks implements java.util.concurrent.Executor {
        final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }
    }

    private List<Handle<Resource>> acquireAttached(RefPool<String, Resource> pool, String... keys) {
        List<Handle<Resource>> handles = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            for (String key : keys) {
                handles.add(pool.acquire(key));
            }
        }
        return handles;
    }

    @Test
    void pendingReleasesAreAppliedOnTheExecutorAfterTheDelayWithNobodyAttaching() throws Exception {
        AtomicReference<Thread> drainerThread = new AtomicReference<>();
        ExecutorService executor = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "test-drainer");
            thread.setDaemon(true);
            drainerThread.set(thread);
            return thread;
        });
        try {
            RefPool<String, Resource> pool = resources.build(resources
                    .builder()
                    .drainDelay(Duration.ofMillis(50))
                    .drainThreshold(1_000)
                    .executor(executor));
            List<Handle<Resource>> handles = acquireAttached(pool, "a", "b");

            handles.forEach(Handle::close);
            eventually().alias("the drainer applied both releases").until(() -> resources.disposalCount() == 2);

            assertEquals(0, pool.stats().pendingDecrements());
            assertEquals(0, pool.stats().live());
            assertSame(drainerThread.get(), resources.created("a").disposedOn, "applied on the pool's executor");
            resources.assertAllDisposedOnceAttached();
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void belowTheThresholdNothingIsHandedToTheExecutorBeforeTheDelay() {
        HeldTasks executor = new HeldTasks();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(3)
                .executor(executor));
        List<Handle<Resource>> handles = acquireAttached(pool, "a", "b");

        handles.forEach(Handle::close);

        assertTrue(executor.tasks.isEmpty(), "the delay has not passed and the threshold is not reached");
        assertEquals(2, pool.stats().pendingDecrements());
        pool.attach().close();
        assertEquals(2, resources.disposalCount());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void theEnqueueThatReachesTheThresholdHandsTheDrainerToTheExecutorAtOnce() throws Exception {
        HeldTasks executor = new HeldTasks();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(3)
                .executor(executor));
        List<Handle<Resource>> handles = acquireAttached(pool, "a", "b", "c");

        handles.get(0).close();
        handles.get(1).close();
        assertTrue(executor.tasks.isEmpty());
        handles.get(2).close();
        assertEquals(1, executor.tasks.size(), "the third pending release crossed the threshold");

        Runnable drainer = executor.tasks.poll();
        Forked<Void> run = forkRun("drainer", drainer::run);
        run.join();

        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(3, resources.disposalCount());
        assertSame(run.thread, resources.created("c").disposedOn, "the drainer applied them, attached");
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aDrainerThatFindsTheWorkDoneAppliesNothingAgain() {
        HeldTasks executor = new HeldTasks();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1)
                .executor(executor));
        List<Handle<Resource>> handles = acquireAttached(pool, "a");
        handles.get(0).close();
        assertEquals(1, executor.tasks.size());

        pool.attach().close(); // an attach applies it first
        long drains = pool.stats().drains();
        executor.tasks.poll().run();

        assertEquals(drains, pool.stats().drains(), "the drainer found the flag down and did nothing");
        assertEquals(1, resources.disposalCount());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void theDrainerAppliesAReleaseWhoseFlagIsNotRaisedYet() throws Exception {
        HeldTasks executor = new HeldTasks();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1)
                .executor(executor));
        List<Handle<Resource>> handles = acquireAttached(pool, "first", "second");
        handles.get(0).close(); // schedules a drainer, held by the executor
        pool.attach().close(); // an attach applies the first release; the held drainer is still to run
        Runnable drainer = executor.tasks.poll();

        // the second release is in the list, its size written, its flag not raised yet
        Forked<Void> releaser = unstartedRun("releaser", handles.get(1)::close);
        TestReleaseHooks hooks = TestReleaseHooks.pausing(Point.BETWEEN_ADD_AND_FLAG, releaser.thread);
        pool.core().releaseQueue().setHooks(hooks);
        releaser.start();
        hooks.awaitArrival();

        Forked<Void> run = forkRun("drainer", drainer::run);
        run.join();
        assertEquals(1, resources.created("second").disposals.get(), "the drainer took the list, not the flag");
        assertSame(run.thread, resources.created("second").disposedOn);

        hooks.proceed();
        releaser.join();
        pool.attach().close(); // the late flag costs an empty swap, nothing more
        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(2, resources.disposalCount());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void theDrainerWaitsForTheGateWhileAnotherThreadIsAttached() throws Exception {
        HeldTasks executor = new HeldTasks();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.GLOBAL)
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1)
                .executor(executor));
        Handle<Resource> handle = acquireAttached(pool, "a").get(0);
        Attachment held = pool.attach();
        forkRun("releaser", handle::close).join();

        Forked<Void> drainer = forkRun("drainer", executor.tasks.poll()::run);
        drainer.join(); // it joins the gate's line without a thread: the executor's thread is free at once
        assertEquals(0, resources.disposalCount(), "the drainer may not apply while another thread is attached");

        held.close(); // this detach applies the release, then hands the gate to the drainer

        assertEquals(1, resources.disposalCount());
        assertEquals(0, pool.stats().pendingDecrements());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void drainSettingsRejectBadInput() {
        RefPool.Builder<String, Resource> builder = resources.builder();
        assertThrows(IllegalArgumentException.class, () -> builder.drainDelay(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> builder.drainDelay(Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> builder.drainDelay(null));
        assertThrows(IllegalArgumentException.class, () -> builder.drainThreshold(0));
        assertThrows(NullPointerException.class, () -> builder.executor(null));
        assertFalse(builder.build().core().releaseQueue().isDirty(), "the rejected settings changed nothing");
    }

    @Test
    void anEvictionNeverHandsTheDrainerToTheExecutorFromInsideTheCache() throws Exception {
        AtomicLong nanos = new AtomicLong();
        AtomicReference<Runnable> expiry = new AtomicReference<>();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.GLOBAL)
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1)
                .executor(Runnable::run) // a drain handed over here would attach inside the eviction
                .idle(cache -> cache.expireAfterAccess(Duration.ofMinutes(1))
                        .ticker(nanos::get)
                        .executor(Runnable::run)
                        .scheduler((executor, command, delay, unit) -> {
                            expiry.set(command);
                            return CompletableFuture.completedFuture(null);
                        })));
        acquireAttached(pool, "a").get(0).close(); // attached close: "a" idles, its expiry is scheduled
        Attachment held = pool.attach();

        // the cache's scheduled maintenance runs on a thread that is not attached and evicts "a"
        nanos.addAndGet(Duration.ofMinutes(2).toNanos());
        forkRun("cache maintenance", () -> expiry.get().run()).join();
        assertEquals(0, resources.disposalCount(), "the eviction was only queued");

        held.close(); // this detach applies the eviction
        assertEquals(1, resources.disposalCount());
        assertSame(Thread.currentThread(), resources.created("a").disposedOn);
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aDrainTheExecutorRejectsRunsOnTheThreadThatScheduledIt() throws Exception {
        List<PoolError> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1)
                .errorListener(errors::add)
                .executor(task -> {
                    throw new java.util.concurrent.RejectedExecutionException("shut down");
                }));
        Handle<Resource> handle = acquireAttached(pool, "a").get(0);

        Forked<Void> releaser = forkRun("releaser", handle::close); // crosses the threshold
        releaser.join(); // close() does not throw although the executor refused the drain

        assertEquals(1, resources.disposalCount());
        assertSame(releaser.thread, resources.created("a").disposedOn, "the releaser drained, attached");
        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(1, errors.size(), errors.toString());
        assertEquals(PoolError.Kind.DRAINER_REJECTED, errors.get(0).kind());
        resources.assertAllDisposedOnceAttached();
    }

    /** An executor that takes its first {@code drops} tasks and never runs them (a discard policy), then runs the rest. */
    private static final class DroppingFirst implements java.util.concurrent.Executor {
        final java.util.concurrent.atomic.AtomicInteger toDrop;
        final java.util.concurrent.atomic.AtomicInteger taken = new java.util.concurrent.atomic.AtomicInteger();
        final ExecutorService runner = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "test-drainer");
            thread.setDaemon(true);
            return thread;
        });

        DroppingFirst(int drops) {
            toDrop = new java.util.concurrent.atomic.AtomicInteger(drops);
        }

        @Override
        public void execute(Runnable task) {
            taken.incrementAndGet();
            if (toDrop.getAndDecrement() <= 0) {
                runner.execute(task);
            }
        }
    }

    @Test
    void aDelayedDrainTheExecutorDroppedDoesNotTurnTheDrainerOff() throws Exception {
        DroppingFirst executor = new DroppingFirst(1);
        try {
            RefPool<String, Resource> pool = resources.build(resources
                    .builder()
                    .drainDelay(Duration.ofMillis(20))
                    .drainThreshold(1_000)
                    .executor(executor));
            List<Handle<Resource>> handles = acquireAttached(pool, "a", "b");

            handles.get(0).close(); // off the attachment: a delayed drain, which the executor drops
            eventually().alias("the drain handed over").until(() -> executor.taken.get() >= 1);
            handles.get(1).close();
            eventually()
                    .alias("both releases applied with nobody attaching")
                    .until(() -> resources.disposalCount() == 2);
            assertEquals(0, pool.stats().pendingDecrements());
            assertTrue(
                    resources.created("a").disposedOn.getName().startsWith("refpool-drainer"),
                    "the dropped drain ran on the pool's own drainer thread");
            assertEquals(1, executor.taken.get(), "and nothing more was handed to the executor");
            resources.assertAllDisposedOnceAttached();
        } finally {
            executor.runner.shutdownNow();
        }
    }

    @Test
    void anUrgentDrainTheExecutorDroppedDoesNotTurnTheDrainerOffEvenAfterClose() throws Exception {
        DroppingFirst executor = new DroppingFirst(1);
        try {
            RefPool<String, Resource> pool = resources.build(resources
                    .builder()
                    .drainDelay(Duration.ofMillis(20))
                    .drainThreshold(1)
                    .executor(executor));
            List<Handle<Resource>> handles = acquireAttached(pool, "a", "b");

            handles.get(0).close(); // at the threshold: an urgent drain, which the executor drops
            assertEquals(1, executor.taken.get());
            pool.close(); // applies a's release; b stays live
            assertEquals(1, resources.disposalCount());
            handles.get(1).close(); // after close: only a drain applies it
            eventually().alias("b disposed after its last handle closed").until(() -> resources.disposalCount() == 2);
            assertEquals(
                    List.of(PoolError.Kind.HANDLES_OPEN_AT_CLOSE),
                    resources.errors.stream().map(PoolError::kind).toList());
            resources.errors.clear(); // b's handle was open at close, as this test means it to be
            resources.assertAllDisposedOnceAttached();
        } finally {
            executor.runner.shutdownNow();
        }
    }
}
