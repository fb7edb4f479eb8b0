package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where a {@code callAsync} function runs: never on the caller inside {@code callAsync}, never on
 * the thread whose release granted its last wait (nested in that thread's attachment and sections),
 * and under strict access nobody else uses the object between the grant and the function's start.
 */
class CallAsyncPlacementTest {
    /** A non-thread-safe engine object. */
    static final class Box {
        final String key;
        int value;
        final AtomicInteger disposals = new AtomicInteger();

        Box(String key) {
            this.key = key;
        }
    }

    /** An executor that keeps its tasks until the test runs them. */
    static final class HeldExecutor implements Executor {
        final BlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        Runnable next() throws InterruptedException {
            Runnable task = tasks.poll(BOUND.toSeconds(), TimeUnit.SECONDS);
            if (task == null) {
                throw new AssertionError("no task was handed to the executor");
            }
            return task;
        }
    }

    private final List<Box> created = new CopyOnWriteArrayList<>();
    private final List<RefPool<String, Box>> pools = new ArrayList<>();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    private RefPool<String, Box> pool(AttachMode mode, Executor callExecutor) {
        RefPool.Builder<String, Box> builder = RefPool.builder((String key) -> {
                    Box box = new Box(key);
                    created.add(box);
                    return box;
                })
                .disposer(box -> box.disposals.incrementAndGet())
                .attachMode(mode)
                .strictAccess(true)
                .errorListener(errors::add)
                .idle(cache -> cache.maximumSize(10));
        if (callExecutor != null) {
            builder.callExecutor(callExecutor);
        }
        RefPool<String, Box> pool = builder.build();
        pools.add(pool);
        return pool;
    }

    @AfterEach
    void everyObjectDisposedExactlyOnce() {
        pools.forEach(RefPool::close);
        for (Box box : created) {
            assertEquals(1, box.disposals.get(), box.key + " disposed exactly once");
        }
    }

    private static Handle<Box> acquire(RefPool<String, Box> pool, String key) {
        return pool.attached(() -> pool.acquire(key));
    }

    private static <T> T await(CompletableFuture<T> future) throws Exception {
        return future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void theFunctionNeverRunsInsideTheSectionsOfTheThreadThatGrantedIt() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, null);
        Handle<Box> b = acquire(pool, "b");
        Guard bSection = pool.attached(b::section);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletableFuture<Integer> later = pool.callAsync("b", CancellationToken.none(), box -> {
                    ranOn.set(Thread.currentThread());
                    return box.value + pool.call("a", a -> ++a.value); // waits for the releaser's "a"
                })
                .toCompletableFuture();
        assertFalse(later.isDone(), "waits for b's section");
        TestKit.Forked<Thread> releaser = fork(
                "releaser",
                () -> pool.call("a", a -> {
                    bSection.close(); // grants b's section to the async call while this thread holds a
                    return Thread.currentThread();
                }));
        assertEquals(1, await(later), "its own call of 'a' waited for the releaser's, then ran");
        assertNotSame(releaser.join(), ranOn.get(), "not nested in the releaser's call of 'a'");
        b.close();
    }

    @Test
    void theFunctionNeverRunsOnTheCallerInsideCallAsync() throws Exception {
        for (AttachMode mode : AttachMode.values()) {
            RefPool<String, Box> pool = pool(mode, null);
            CountDownLatch returned = new CountDownLatch(1);
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            CompletableFuture<Integer> later = pool.callAsync("a", CancellationToken.none(), a -> {
                        ranOn.set(Thread.currentThread());
                        TestKeyedPoolFixtures.awaitLatch(returned); // a runaway script would block its caller here
                        return ++a.value;
                    })
                    .toCompletableFuture();
            returned.countDown();
            assertEquals(1, await(later), mode.toString());
            assertNotSame(Thread.currentThread(), ranOn.get(), mode.toString());
            assertFalse(pool.isAttached());
        }
    }

    @Test
    void strictAccessAdmitsNoBystanderBetweenTheGrantAndTheFunction() throws Exception {
        HeldExecutor executor = new HeldExecutor();
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, executor);
        Handle<Box> handle = acquire(pool, "a");
        Guard section = pool.attached(handle::section);
        CompletableFuture<Integer> later =
                pool.callAsync("a", CancellationToken.none(), a -> ++a.value).toCompletableFuture();
        forkRun("releaser", section::close).join(); // grants the section: the function is handed over
        Runnable function = executor.next();
        try {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> pool.attached(handle::get));
            assertTrue(refused.getMessage().contains("section"), refused.getMessage());
        } finally {
            forkRun("call executor", function::run).join(); // the held gate and section go back either way
        }
        assertEquals(1, await(later));
        handle.close();
    }

    @Test
    void anExecutorThatRunsInlineRejectsOrThrowsAnErrorStillRunsTheFunctionElsewhere() throws Exception {
        Executor[] executors = {
            Runnable::run,
            task -> {
                throw new RejectedExecutionException("shut down");
            },
            task -> {
                throw new OutOfMemoryError("unable to create native thread");
            }
        };
        for (Executor executor : executors) {
            RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, executor);
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            CompletableFuture<Integer> later = pool.callAsync("a", CancellationToken.none(), a -> {
                        ranOn.set(Thread.currentThread());
                        return ++a.value;
                    })
                    .toCompletableFuture();
            assertEquals(1, await(later));
            assertNotSame(Thread.currentThread(), ranOn.get());
            assertEquals(
                    1,
                    pool.<Integer, RuntimeException>call("a", a -> a.value),
                    "the section and the reference were given back");
            assertEquals(0L, pool.attached(() -> pool.stats().live()));
        }
        assertEquals(
                2,
                errors.stream()
                        .filter(e -> e.kind() == PoolError.Kind.CALL_EXECUTOR_FAILED)
                        .count());
    }

    @Test
    void anAttachAsyncGrantedWhenACallAsyncGivesTheGateBackRunsWithoutAMonitorOfThePool() throws Exception {
        ExecutorService callThreads = Executors.newSingleThreadExecutor();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(AttachMode.GLOBAL)
                .callExecutor(callThreads)
                .build();
        try {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            // the gate is free: the call holds it through the guard of an immediate entry
            CompletionStage<Object> first = pool.callAsync("k", CancellationToken.none(), engine -> {
                running.countDown();
                assertTrue(finish.await(BOUND.toSeconds(), TimeUnit.SECONDS));
                return null;
            });
            assertTrue(running.await(BOUND.toSeconds(), TimeUnit.SECONDS));
            // queued behind the call's hold; granted, and run, by the call's release of the gate
            CompletionStage<List<String>> second =
                    pool.attachAsync(CancellationToken.none(), attachment -> poolMonitorsHeld());
            finish.countDown();
            first.toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
            // a virtual thread that parks inside a monitor pins its carrier before JDK 24
            assertEquals(List.of(), second.toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS));
        } finally {
            pool.close();
            callThreads.shutdownNow();
        }
    }

    /** {@return the pool's monitors the calling thread holds, with where it took each} */
    private static List<String> poolMonitorsHeld() {
        @SuppressWarnings("deprecation") // threadId() is JDK 19+
        long id = Thread.currentThread().getId();
        List<String> held = new ArrayList<>();
        for (MonitorInfo monitor : ManagementFactory.getThreadMXBean()
                .getThreadInfo(new long[] {id}, true, false)[0]
                .getLockedMonitors()) {
            if (monitor.getClassName().startsWith("io.refpool.")) {
                held.add(monitor.getClassName() + " at " + monitor.getLockedStackFrame());
            }
        }
        return held;
    }
}
