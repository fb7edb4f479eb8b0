package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Virtual threads (JDK 21+; skipped on older JDKs): ten thousand of them share a hundred keys
 * through twenty objects, acquiring asynchronously (waiting for capacity), attaching to use their
 * object, and closing their handles on and off attachment. Every object is disposed exactly once,
 * never while a handle to it is open, and never more than twenty exist at once.
 */
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadPoolTest {
    private static final int THREADS = 10_000;
    private static final int KEYS = 100;
    private static final int MAX_OBJECTS = 20;

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void tenThousandVirtualThreadsShareAHundredKeysThroughTwentyObjects(AttachMode mode) throws Throwable {
        Engine engine = new Engine();
        engine.beforeCreate = key -> {
            int existing = engine.created.size() - engine.disposed.size();
            if (existing >= MAX_OBJECTS) {
                engine.violations.add("a creation with " + existing + " objects undisposed");
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder()
                .attachMode(mode)
                .maxObjects(MAX_OBJECTS)
                .idle(cache -> cache.maximumSize(MAX_OBJECTS / 2))
                .drainDelay(Duration.ofMillis(5)));
        List<CompletableFuture<Handle<Session>>> acquires = new ArrayList<>();
        List<Future<?>> tasks = new ArrayList<>();
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        try {
            for (int i = 0; i < THREADS; i++) {
                String key = "k" + (i * 7919 % KEYS);
                boolean closeAttached = i % 2 == 0;
                CompletableFuture<Handle<Session>> acquire = new CompletableFuture<>();
                acquires.add(acquire);
                tasks.add(virtualThreads.submit(() -> {
                    pool.acquireAsync(key, CancellationToken.none()).whenComplete((handle, failure) -> {
                        if (failure != null) {
                            acquire.completeExceptionally(failure);
                        } else {
                            handle.get().openHandles.incrementAndGet();
                            acquire.complete(handle);
                        }
                    });
                    Handle<Session> handle = acquire.join();
                    try (Attachment attached = pool.attach()) {
                        if (handle.get().isDisposed()) {
                            engine.violations.add(handle.get() + " in use after its disposal");
                        }
                        if (closeAttached) {
                            handle.get().openHandles.decrementAndGet();
                            handle.close();
                        }
                    }
                    if (!closeAttached) {
                        handle.get().openHandles.decrementAndGet();
                        handle.close(); // off-attachment: deferred
                    }
                    return null;
                }));
            }
            for (Future<?> task : tasks) {
                task.get(BOUND.toSeconds() * 3, TimeUnit.SECONDS);
            }
        } finally {
            virtualThreads.shutdown();
            assertTrue(virtualThreads.awaitTermination(BOUND.toSeconds(), TimeUnit.SECONDS));
        }
        assertTrue(acquires.stream().allMatch(f -> f.isDone() && !f.isCompletedExceptionally()));
        assertEquals(0, pool.stats().capacityWaiters());
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(0, pool.stats().live());
        assertEquals(pool.stats().creations(), pool.stats().disposals());
        assertEquals(engine.factoryCalls.get(), engine.created.size());
    }
}
