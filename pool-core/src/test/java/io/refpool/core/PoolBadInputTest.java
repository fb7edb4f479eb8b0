package io.refpool.core;

import static io.refpool.core.CapacityTest.assertAllPermitsFree;
import static io.refpool.core.CapacityTest.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.PoolCore;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad input gets a clear exception at the call that made it, naming the problem, and changes no
 * state: stats and later behaviour are as if the call had not been made.
 */
class PoolBadInputTest {
    private static void assertMessageNames(Throwable thrown, String... words) {
        for (String word : words) {
            assertTrue(
                    thrown.getMessage() != null && thrown.getMessage().contains(word),
                    "'" + thrown.getMessage() + "' should name " + word);
        }
    }

    private static <T extends Throwable> T assertRejected(Class<T> type, Executable call, String... words) {
        T thrown = assertThrows(type, call);
        assertMessageNames(thrown, words);
        return thrown;
    }

    @Test
    void nullArgumentsAreRejectedByName() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        String before = pool.stats().toString();
        try (Attachment attached = pool.attach()) {
            assertRejected(NullPointerException.class, () -> pool.acquire(null), "key");
        }
        assertRejected(NullPointerException.class, () -> pool.acquireAsync(null, CancellationToken.none()), "key");
        assertRejected(NullPointerException.class, () -> pool.acquireAsync("k", (CancellationToken) null), "token");
        assertRejected(NullPointerException.class, () -> pool.attach((CancellationToken) null), "token");
        assertRejected(NullPointerException.class, () -> pool.attach((Duration) null), "timeout");
        assertRejected(
                IllegalArgumentException.class, () -> pool.attach(Duration.ofMillis(-1)), "timeout", "PT-0.001S");
        assertRejected(NullPointerException.class, () -> pool.acquireAsync("k", (Duration) null), "timeout");
        assertRejected(NullPointerException.class, () -> pool.attachAsync(null, a -> null), "token");
        assertRejected(NullPointerException.class, () -> pool.attachAsync(CancellationToken.none(), null), "fn");
        try (Attachment attached = pool.attach()) {
            assertRejected(NullPointerException.class, () -> attached.detached(null), "work");
        }
        assertRejected(NullPointerException.class, () -> pool.stats().evictions(null), "cause");
        assertEquals(before, pool.stats().toString(), "no state changed");
        assertEquals(0, engine.factoryCalls.get());
        pool.close();
    }

    @Test
    void builderRejectsBadSizesAndStaysUsable() {
        Engine engine = new Engine();
        RefPool.Builder<String, Session> builder = engine.builder();
        assertRejected(IllegalArgumentException.class, () -> builder.maxObjects(0), "maxObjects", "0");
        assertRejected(IllegalArgumentException.class, () -> builder.maxObjects(-3), "maxObjects", "-3");
        assertRejected(IllegalArgumentException.class, () -> builder.drainThreshold(0), "drainThreshold");
        assertRejected(IllegalArgumentException.class, () -> builder.drainDelay(Duration.ZERO), "drainDelay");
        assertRejected(IllegalArgumentException.class, () -> builder.drainDelay(Duration.ofMillis(-1)), "drainDelay");
        assertRejected(
                NullPointerException.class,
                () -> builder.disposer((PoolConsumer<Session, RuntimeException>) null),
                "disposer");
        assertRejected(
                NullPointerException.class, () -> builder.disposer((Disposer<String, Session>) null), "disposer");
        assertRejected(NullPointerException.class, () -> builder.attachMode(null), "attachMode");
        assertRejected(NullPointerException.class, () -> builder.executor(null), "executor");
        assertRejected(NullPointerException.class, () -> builder.errorListener(null), "errorListener");
        assertRejected(NullPointerException.class, () -> builder.idle(null), "configurer");
        assertRejected(NullPointerException.class, () -> builder.leakDetection(null), "leakDetection");
        assertRejected(IllegalArgumentException.class, () -> builder.leakSamplingRate(0), "leakSamplingRate", "0");
        assertRejected(IllegalArgumentException.class, () -> builder.name(" "), "name", "blank");
        assertRejected(NullPointerException.class, () -> builder.name(null), "name");
        assertRejected(NullPointerException.class, () -> RefPool.builder(null), "factory");

        RefPool<String, Session> pool = engine.build(builder); // the rejected calls changed nothing
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < 100; i++) {
                pool.acquire("k" + i); // unbounded, as by default
            }
        }
        assertEquals(AttachMode.PER_OBJECT, pool.attachMode()); // the default
        pool.close();
    }

    @Test
    void badIdleCacheConfigurationIsRejectedAtBuild() {
        Engine engine = new Engine();
        assertThrows(
                IllegalArgumentException.class,
                () -> engine.builder().idle(cache -> cache.maximumSize(-1)).build());
        assertRejected(
                IllegalArgumentException.class,
                () -> engine.builder()
                        .idle(cache -> cache.evictionListener((key, value, cause) -> {}))
                        .build(),
                "eviction listener");
        IllegalStateException caffeines = assertThrows(
                IllegalStateException.class,
                () -> engine.builder().idle(cache -> cache.maximumWeight(100)).build(),
                "Caffeine's own check, not mistaken for an eviction listener");
        assertMessageNames(caffeines, "weigher");
    }

    /** The pool holds what it pools strongly: a weak or soft reference in the cache would never let go. */
    @Test
    void weakOrSoftReferencesInTheIdleCacheAreRejectedAtBuild() {
        Engine engine = new Engine();
        List<java.util.function.Consumer<com.github.benmanes.caffeine.cache.Caffeine<Object, Object>>> configurers =
                List.of(
                        cache -> cache.maximumSize(8).softValues(),
                        cache -> cache.weakValues(),
                        cache -> cache.maximumSize(8).weakKeys());
        for (java.util.function.Consumer<com.github.benmanes.caffeine.cache.Caffeine<Object, Object>> configurer :
                configurers) {
            assertRejected(
                    IllegalArgumentException.class,
                    () -> engine.builder().idle(configurer::accept).build(),
                    "idle(...)",
                    "weak or soft");
        }
        RefPool<String, Session> pool =
                engine.builder().idle(cache -> cache.maximumSize(8)).build(); // builds
        pool.close();
    }

    @Test
    void aValidatorWithoutAnIdleCacheIsRejectedAtBuild() {
        Engine engine = new Engine();
        RefPool.Builder<String, Session> builder = engine.builder().validator((key, session) -> true);
        // without a cache nothing is ever revived, so the check would never run
        assertRejected(IllegalStateException.class, builder::build, "validator", "idle(");
        assertRejected(
                IllegalStateException.class,
                () -> engine.builder()
                        .threadLeases(Duration.ofSeconds(1))
                        .validator((key, session) -> true)
                        .build(),
                "validator",
                "idle(");
        RefPool<String, Session> pool = engine.build(builder.idle(cache -> cache.maximumSize(4)));
        pool.close();
    }

    @Test
    void aFailedBuildLeavesNoCheckScheduledAndUsesNoName() {
        Engine engine = new Engine();
        RefPool<String, Session> before = engine.build(engine.builder());
        int queued = PoolCore.heldChecksQueuedForTests();
        assertThrows(IllegalArgumentException.class, () -> engine.builder()
                .heldTooLong(Duration.ofHours(1))
                .idle(cache -> {
                    throw new IllegalArgumentException("the configurer's own failure");
                })
                .build());
        assertTrue(PoolCore.heldChecksQueuedForTests() <= queued, "the failed build's check stayed scheduled");
        RefPool<String, Session> after = engine.build(engine.builder());
        assertEquals(unnamedNumber(before) + 1, unnamedNumber(after), before.name() + ", then " + after.name());
        before.close();
        after.close();
    }

    private static int unnamedNumber(RefPool<?, ?> pool) {
        return Integer.parseInt(pool.name().substring("refpool-".length()));
    }

    @Test
    void aFactoryReturningNullFailsClearlyAndLeavesNoTrace() {
        Engine engine = new Engine();
        ObjectFactory<String, Session> returnsNull = key -> key.equals("broken") ? null : engine.apply(key);
        RefPool<String, Session> pool = RefPool.builder(returnsNull)
                .disposer(engine::accept)
                .errorListener(engine.errors::add)
                .maxObjects(1)
                .build();
        try (Attachment attached = pool.attach()) {
            assertRejected(NullPointerException.class, () -> pool.acquire("broken"), "null", "'broken'");
            assertRejected(NullPointerException.class, () -> pool.acquire("broken"), "null", "'broken'");
        }
        assertEquals(2, engine.errors(PoolError.Kind.FACTORY_FAILED).size());
        assertEquals(0, pool.stats().creations());
        assertEquals(0, pool.stats().live());
        assertAllPermitsFree(pool, 1);
        pool.close();
    }

    @Test
    void aFactoryReturningOneInstanceForTwoKeysFailsClearlyAndLeavesTheFirstKeyAlone() {
        Engine engine = new Engine();
        Session shared = new Session("shared", 0);
        RefPool<String, Session> pool = RefPool.<String, Session>builder(key -> shared)
                .disposer(engine::accept)
                .errorListener(engine.errors::add)
                .maxObjects(2)
                .build();
        try (Attachment attached = pool.attach();
                Handle<Session> first = pool.acquire("a")) {
            IllegalStateException twice =
                    assertRejected(IllegalStateException.class, () -> pool.acquire("b"), "'b'", "another key");
            assertSame(
                    twice, engine.errors(PoolError.Kind.FACTORY_FAILED).get(0).cause());
            assertSame(shared, first.get());
            assertFalse(shared.isDisposed(), "the object of 'a' was not touched");
            assertEquals(1, pool.stats().creations());
            assertEquals(1, pool.stats().live());
        }
        assertEquals(1, shared.disposals.get(), "disposed once, as the object of 'a'");
        pool.close();
        assertEquals(1, shared.disposals.get());
    }

    @Test
    void usingAClosedPoolFailsClearly() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        Handle<Session> open;
        try (Attachment attached = pool.attach()) {
            open = pool.acquire("k");
        }
        pool.close();
        String before = pool.stats().toString();

        assertRejected(PoolClosedException.class, pool::attach, "attach()", "closed");
        assertRejected(PoolClosedException.class, pool::stopTheWorld, "closed");
        PoolClosedException acquireAsync = assertInstanceOf(
                PoolClosedException.class,
                failureOf(pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture()),
                "acquireAsync reports a closed pool through its stage");
        assertTrue(acquireAsync.getMessage().contains("'k'")
                && acquireAsync.getMessage().contains("closed"));
        assertInstanceOf(
                PoolClosedException.class,
                failureOf(pool.attachAsync(CancellationToken.none(), a -> "ran").toCompletableFuture()));
        assertEquals(before, pool.stats().toString(), "no state changed");
        assertTrue(pool.toString().contains("closed"), pool.toString());

        try (Handle<Session> copy = open.share()) { // a live object can still be shared after close
            assertSame(open.get(), copy.get());
        }
        open.close();
        engine.awaitAllDisposedExactlyOnce();
    }

    @Test
    void acquireWithoutAttachingFailsClearly() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        assertRejected(IllegalStateException.class, () -> pool.acquire("tenant-7"), "'tenant-7'", "attach");
        assertEquals(0, engine.factoryCalls.get());
        pool.close();
    }

    @Test
    void aClosedHandleRefusesUseByName() {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder());
        try (Attachment attached = pool.attach()) {
            Handle<Session> handle = pool.acquire("tenant-7");
            handle.close();
            assertFalse(handle.isOpen());
            assertRejected(IllegalStateException.class, handle::get, "'tenant-7'", "closed");
            assertRejected(IllegalStateException.class, handle::share, "'tenant-7'", "closed");
            handle.close(); // a second close is a no-op
        }
        assertEquals(1, pool.stats().disposals());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
