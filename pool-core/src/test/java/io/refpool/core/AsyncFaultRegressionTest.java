package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Async calls whose executor takes the task and then throws, and an async acquire whose key
 * throws: each fault goes through the call's stage, and the function and every release run once.
 * An async creation in {@code GLOBAL} mode, granted on the call executor's one thread, completes;
 * a ticker that throws while capacity is reclaimed does not stop the reclaim.
 */
class AsyncFaultRegressionTest {
    static final class Resource {
        final AtomicInteger disposed = new AtomicInteger();
    }

    @Test
    void anExecutorThatQueuesTheTaskAndThenThrowsRunsNothingTwice() throws Exception {
        BlockingQueue<Runnable> queued = new LinkedBlockingQueue<>();
        Resource resource = new Resource();
        RefPool<String, Resource> pool = RefPool.builder((String k) -> resource)
                .disposer(r -> r.disposed.incrementAndGet())
                .errorListener(e -> {})
                .callExecutor(task -> {
                    queued.add(task);
                    throw new OutOfMemoryError("unable to create native thread");
                })
                .build();
        Handle<Resource> mine = pool.attached(() -> pool.acquire("a"));
        assertEquals(
                1,
                pool.callAsync("a", CancellationToken.none(), r -> 1)
                        .toCompletableFuture()
                        .get(10, TimeUnit.SECONDS));
        queued.take().run(); // the executor's copy, late: the task ran already on the pool's thread
        assertEquals(0, resource.disposed.get(), "the object was released twice while a handle is open");
        pool.attached(() -> {
            mine.close();
            return null;
        });
        pool.close();
        assertEquals(1, resource.disposed.get());
    }

    @Test
    void anAsyncCreationInGlobalModeNeverWaitsForTheGateOnTheCallExecutorsOneThread() throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor();
        RefPool<String, Object> pool = RefPool.builder((String k) -> new Object())
                .attachMode(AttachMode.GLOBAL)
                .callExecutor(single)
                .errorListener(e -> {})
                .build();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        CompletableFuture<Integer> first = pool.callAsync("a", CancellationToken.none(), v -> {
                    running.countDown();
                    assertTrue(mayReturn.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                    return 1;
                })
                .toCompletableFuture();
        assertTrue(running.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)); // holds the gate, on the one thread
        // in line for the gate, in this order: a creation, then a call whose function needs the thread
        CompletableFuture<Handle<Object>> created =
                pool.acquireAsync("new", CancellationToken.none()).toCompletableFuture();
        CompletableFuture<Integer> second =
                pool.callAsync("a", CancellationToken.none(), v -> 2).toCompletableFuture();
        // the first call's return grants the creation, on the call thread: had its factory given the
        // gate up to the second call, it would wait there to take it back, and the second call's
        // function, queued behind it on that thread, would never run
        mayReturn.countDown();

        assertEquals(1, first.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        Handle<Object> handle = created.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(2, second.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        pool.runAttached(handle::close);
        pool.close();
        single.shutdown();
    }

    @Test
    void aCreationNestedInACallAsyncFunctionInGlobalModeKeepsTheGateToo() throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor();
        CountDownLatch creatingB = new CountDownLatch(1);
        CountDownLatch finishB = new CountDownLatch(1);
        RefPool<String, Object> pool = RefPool.builder((String k) -> {
                    if (k.equals("b")) {
                        creatingB.countDown();
                        assertTrue(finishB.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                    }
                    return new Object();
                })
                .attachMode(AttachMode.GLOBAL)
                .callExecutor(single)
                .errorListener(e -> {})
                .build();
        Handle<Object> c = pool.attached(() -> pool.acquire("c")); // live: a call on it needs only the gate
        CompletableFuture<Object> first = pool.callAsync("a", CancellationToken.none(), a -> pool.call("b", b -> b))
                .toCompletableFuture();
        assertTrue(creatingB.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)); // b's factory, on the one thread
        // had the factory given the gate up, this call took it at once and its function is now queued
        // behind the factory on the one thread, which would then wait for the gate to take it back
        CompletableFuture<String> second =
                pool.callAsync("c", CancellationToken.none(), v -> "c").toCompletableFuture();
        finishB.countDown();

        first.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals("c", second.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        pool.runAttached(c::close);
        pool.close();
        single.shutdown();
    }

    @Test
    void aTickerThatThrowsWhileCapacityIsReclaimedIsReportedAndTheIdleObjectStillMakesRoom() throws Exception {
        AtomicBoolean tickerFails = new AtomicBoolean();
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();
        RefPool<String, Object> pool = RefPool.builder((String k) -> new Object())
                .maxObjects(1)
                .ticker(() -> {
                    if (tickerFails.get()) {
                        throw new IllegalStateException("the ticker failed");
                    }
                    return 0L;
                })
                .idle(cache -> cache.expireAfterAccess(Duration.ofMinutes(5)))
                .disposer((String k, Object v, DisposalCause cause) -> disposed.put(v, cause))
                .errorListener(errors::add)
                .build();
        Object idle = pool.call("a", v -> v);
        tickerFails.set(true); // the cache's views read it: the reclaim cannot look through the cache

        Handle<Object> handle = pool.acquireAsync("b", CancellationToken.none())
                .toCompletableFuture()
                .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(DisposalCause.CAPACITY, disposed.get(idle), "the idle object made room all the same");
        assertTrue(
                errors.stream().anyMatch(e -> e.kind() == PoolError.Kind.IDLE_CACHE_FAILED),
                "reported as the cache's failure: " + errors);
        assertTrue(
                errors.stream().noneMatch(e -> e.kind() == PoolError.Kind.FACTORY_FAILED),
                "not as the factory's: " + errors);
        tickerFails.set(false);
        pool.runAttached(handle::close);
        pool.close();
    }

    @Test
    void aKeyThatThrowsFailsTheAsyncAcquiresStageNotTheCall() {
        RefPool<Object, Object> pool = RefPool.builder((Object k) -> new Object())
                .errorListener(e -> {})
                .build();
        Object key = new Object() {
            @Override
            public int hashCode() {
                throw new IllegalStateException("hashCode of the key");
            }
        };
        CompletableFuture<Handle<Object>> acquired =
                pool.acquireAsync(key, CancellationToken.none()).toCompletableFuture();
        ExecutionException failed = assertThrows(ExecutionException.class, acquired::get);
        assertEquals("hashCode of the key", failed.getCause().getMessage());
        pool.close();
    }
}
