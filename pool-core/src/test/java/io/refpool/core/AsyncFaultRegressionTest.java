package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.refpool.sync.CancellationToken;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Async calls whose executor takes the task and then throws, and an async acquire whose key
 * throws: each fault goes through the call's stage, and the function and every release run once.
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
