package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A disposer closes the pool, on an attached thread's disposal loop. That close runs there and
 * disposes the idle objects before it returns, not after the disposer returns: another thread's
 * {@code close()} or {@code close(Duration)} that returns meanwhile finds them disposed.
 */
class CloseFromADisposerTest {
    private static final long BOUND_SECONDS = 10;

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCloseFromADisposerDisposesTheIdleObjectsBeforeAnyCloseReturns(AttachMode mode) throws Exception {
        Map<String, Integer> disposed = new ConcurrentHashMap<>();
        CountDownLatch closedInDisposer = new CountDownLatch(1);
        CountDownLatch letDisposerReturn = new CountDownLatch(1);
        AtomicReference<RefPool<String, String>> self = new AtomicReference<>();
        RefPool<String, String> pool = RefPool.builder((String key) -> "object of " + key)
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(10))
                .disposer((String key, String value, DisposalCause cause) -> {
                    disposed.merge(key, 1, Integer::sum);
                    if (key.equals("trigger")) {
                        self.get().close();
                        closedInDisposer.countDown();
                        assertTrue(letDisposerReturn.await(BOUND_SECONDS, TimeUnit.SECONDS), "let return");
                    }
                })
                .build();
        self.set(pool);
        try (Attachment attached = pool.attach()) {
            pool.acquire("idle").close(); // attached: idle in the cache
        }
        CompletableFuture<Void> disposing = CompletableFuture.runAsync(() -> {
            try (Attachment attached = pool.attach()) {
                Handle<String> trigger = pool.acquire("trigger");
                trigger.invalidate();
                trigger.close(); // attached: disposed now, and its disposer closes the pool
            }
        });
        try {
            assertTrue(closedInDisposer.await(BOUND_SECONDS, TimeUnit.SECONDS), "the disposer's close() returned");
            assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)), "close(Duration): the pool is closed");
            pool.close();
            assertEquals(1, disposed.getOrDefault("idle", 0), "the idle object, disposed before any close returned");
        } finally {
            letDisposerReturn.countDown();
            disposing.get(BOUND_SECONDS, TimeUnit.SECONDS);
        }
        assertEquals(Map.of("idle", 1, "trigger", 1), disposed, "each disposed once");
    }
}
