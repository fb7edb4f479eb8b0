package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.joinedFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code pool.warmUp(keys, token)}: keys without an object are created and left idle, on the pool's
 * executor; existing keys are skipped; only free capacity is used; a cancelled token stops it; a
 * close during a warm-up's factory disposes the object once and fails the stage.
 */
class WarmUpTest {
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();
    private final AtomicInteger created = new AtomicInteger();
    private final List<PoolError> errors = new ArrayList<>();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    private RefPool.Builder<String, Object> builder() {
        return RefPool.newBuilder()
                .executor(executor)
                .idle(cache -> cache.maximumSize(100))
                .errorListener(errors::add)
                .disposer((String key, Object value, DisposalCause cause) -> {
                    if (disposed.put(value, cause) != null) {
                        throw new AssertionError("disposed twice: " + value);
                    }
                });
    }

    private RefPool<String, Object> pool(RefPool.Builder<String, Object> builder) {
        return builder.build(key -> {
            created.incrementAndGet();
            return key + "#" + created.get();
        });
    }

    private static int warm(RefPool<String, Object> pool, CancellationToken token, String... keys) throws Exception {
        return pool.warmUp(Arrays.asList(keys), token).toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void keysWithoutAnObjectAreCreatedAndLeftIdle() throws Exception {
        RefPool<String, Object> pool = pool(builder());
        Handle<Object> live = pool.attached(() -> pool.acquire("a"));
        assertEquals(2, warm(pool, CancellationToken.none(), "a", "b", "c", "b"), "a is live, b twice");
        assertEquals(3, created.get());
        assertEquals(2, pool.stats().idle());
        assertEquals(1, pool.stats().live());
        assertSame(pool.call("b", value -> value), pool.call("b", value -> value));
        assertEquals(3, created.get(), "acquires of a warmed key revive it");
        assertEquals(0, warm(pool, CancellationToken.none(), "b", "c"), "warm already");
        pool.runAttached(live::close);
        pool.close();
        assertEquals(3, disposed.size());
    }

    @Test
    void aWarmUpUsesOnlyFreeCapacityAndStopsWhenNoneIsLeft() throws Exception {
        RefPool<String, Object> pool = pool(builder().maxObjects(2));
        Handle<Object> live = pool.attached(() -> pool.acquire("a"));
        assertEquals(1, warm(pool, CancellationToken.none(), "b", "c", "d"));
        assertEquals(2, created.get(), "c and d: no free permit, and no idle object is evicted for them");
        assertEquals(Map.of(), disposed);
        assertEquals(1, pool.stats().idle());
        assertTrue(live.isOpen());
        pool.runAttached(live::close);
        pool.close();
    }

    @Test
    void aCancelledTokenStopsTheWarmUpAndKeepsWhatItMade() throws Exception {
        CancellationSource source = new CancellationSource();
        RefPool<String, Object> pool = builder().build(key -> {
            created.incrementAndGet();
            source.cancel(); // cancelled while the first key's factory runs
            return key;
        });
        assertEquals(1, warm(pool, source.token(), "a", "b", "c"));
        assertEquals(1, created.get());
        assertEquals(1, pool.stats().idle(), "the object made is kept idle");
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get("a"));
    }

    /**
     * A close while a warm-up's factory runs: the object it makes is disposed exactly once, as
     * CLOSED, the stage fails with PoolClosedException, and both close and the warm-up finish.
     */
    @Test
    void aCloseDuringAWarmUpFactoryDisposesItsObjectOnceAndFailsTheStage() throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        RefPool<String, Object> pool = builder().build(key -> {
            created.incrementAndGet();
            inFactory.countDown();
            finish.await();
            return key;
        });
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("w", "x"), CancellationToken.none()).toCompletableFuture();
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        Forked<Void> closing = fork("closer", () -> {
            pool.close();
            return null;
        });
        io.refpool.testkit.TestKit.awaitParked(closing.thread); // close waits for the warm-up's creation
        assertTrue(pool.isClosed());
        finish.countDown();

        closing.join();
        assertInstanceOf(PoolClosedException.class, joinedFailure(warming));
        assertEquals(Map.of("w", DisposalCause.CLOSED), disposed);
        assertEquals(1, created.get(), "x was never created");
        assertEquals(0, pool.stats().live() + pool.stats().idle());
    }

    @Test
    void aFailingFactoryFailsTheStageAndKeepsTheKeysBeforeIt() {
        RefPool<String, Object> pool = builder().build(key -> {
            if (key.equals("bad")) {
                throw new java.io.IOException("no engine for " + key);
            }
            return key;
        });
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("a", "bad", "c"), CancellationToken.none()).toCompletableFuture();
        Throwable failure = joinedFailure(warming);
        assertInstanceOf(ObjectCreationException.class, failure);
        assertEquals(1, pool.stats().idle(), "a stays warm");
        assertFalse(pool.stats().creations() > 1, "c is not created");
        pool.close();
    }

    @Test
    void badCallsAreRefusedAtTheCall() {
        RefPool<String, Object> cached = pool(builder());
        assertThrows(NullPointerException.class, () -> cached.warmUp(null, CancellationToken.none()));
        assertThrows(NullPointerException.class, () -> cached.warmUp(List.of("a"), null));
        NullPointerException nullKey = assertThrows(
                NullPointerException.class, () -> cached.warmUp(Arrays.asList("a", null), CancellationToken.none()));
        assertTrue(nullKey.getMessage().contains("index 1"), nullKey.getMessage());
        cached.close();
        assertInstanceOf(
                PoolClosedException.class, joinedFailure(cached.warmUp(List.of("a"), CancellationToken.none())));

        RefPool<String, Object> uncached = RefPool.newBuilder().build(key -> key);
        IllegalStateException noCache = assertThrows(
                IllegalStateException.class, () -> uncached.warmUp(List.of("a"), CancellationToken.none()));
        assertTrue(noCache.getMessage().contains("idle cache"), noCache.getMessage());
        assertEquals(0, uncached.stats().creations());
        uncached.close();
    }
}
