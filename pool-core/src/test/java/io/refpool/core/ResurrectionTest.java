package io.refpool.core;

import static io.refpool.core.TestKeyedPoolFixtures.onOtherThread;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Resurrection: a release deferred off-attachment and applied after the key was acquired again is a
 * plain decrement of the current count, never "mark idle" or "dispose": the object stays live for
 * the new holder (the crash class of image-loading caches whose deferred release recycled a
 * resource that a new request had taken again).
 */
class ResurrectionTest {
    private static RefPool<String, Session> pool(Engine engine, boolean idleCache, AttachMode mode) {
        RefPool.Builder<String, Session> builder =
                engine.builder().attachMode(mode).drainDelay(Duration.ofMillis(10));
        if (idleCache) {
            builder.idle(cache -> cache.maximumSize(10));
        }
        return engine.build(builder);
    }

    @ParameterizedTest(name = "idle cache: {0}")
    @ValueSource(booleans = {false, true})
    void aDeferredCloseAppliedAfterAnAttachedReacquireLeavesTheObjectLive(boolean idleCache) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, idleCache, AttachMode.GLOBAL);
        Handle<Session> first;
        try (Attachment attached = pool.attach()) {
            first = pool.acquire("image-7");
        }
        try (Attachment attached = pool.attach()) {
            onOtherThread(() -> {
                first.close(); // off-attachment: a pending decrement, count still 1
                return null;
            });
            assertEquals(1, pool.stats().pendingDecrements());
            try (Handle<Session> again = pool.acquire("image-7")) {
                again.get().openHandles.incrementAndGet();
                assertEquals(1, engine.factoryCalls.get(), "the live object was shared, not created again");
                pool.attach().close(); // a nested attach drains: count 2 - 1
                assertEquals(0, pool.stats().pendingDecrements());
                assertFalse(again.get().isDisposed(), "the drain left the re-acquired object live");
                assertEquals(1, pool.stats().live());
                assertSame(engine.created.get(0), again.get());
                again.get().openHandles.decrementAndGet();
            }
            assertEquals(idleCache ? 0 : 1, pool.stats().disposals());
        }
        engine.assertNoViolations();
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @ParameterizedTest(name = "idle cache: {0}")
    @ValueSource(booleans = {false, true})
    void theDrainerApplyingADeferredCloseLeavesAnObjectReacquiredMeanwhileLive(boolean idleCache) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, idleCache, AttachMode.SHARED);
        Handle<Session> first;
        try (Attachment attached = pool.attach()) {
            first = pool.acquire("image-7");
        }
        try (Attachment attached = pool.attach()) {
            onOtherThread(() -> {
                first.close();
                return null;
            });
            try (Handle<Session> again = pool.acquire("image-7")) {
                again.get().openHandles.incrementAndGet();
                // this thread stays attached; the drainer attaches (shared) and applies the close. The
                // queue empties when the drainer takes its batch, before it applies it and counts
                // the drain, so wait for the count too
                eventually()
                        .until(() -> pool.stats().pendingDecrements() == 0
                                && pool.stats().drains() == 1);
                assertEquals(1, pool.stats().drains());
                assertFalse(again.get().isDisposed());
                assertEquals(1, pool.stats().live());
                again.get().openHandles.decrementAndGet();
            }
        }
        engine.assertNoViolations();
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aDeferredCloseOfARevivedObjectLeavesItLive() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = pool(engine, true, AttachMode.GLOBAL);
        Handle<Session> stale;
        try (Attachment attached = pool.attach()) {
            Handle<Session> h = pool.acquire("image-7");
            stale = h.share();
            h.close();
        }
        try (Attachment attached = pool.attach()) {
            onOtherThread(() -> {
                stale.close(); // the last reference, deferred: the object would idle when applied
                return null;
            });
            try (Handle<Session> again = pool.acquire("image-7")) {
                again.get().openHandles.incrementAndGet();
                pool.attach().close();
                assertFalse(again.get().isDisposed());
                assertEquals(1, pool.stats().live());
                assertEquals(0, pool.stats().idle(), "live, not marked idle by the deferred close");
                again.get().openHandles.decrementAndGet();
            }
            assertEquals(1, pool.stats().idle());
            try (Handle<Session> revived = pool.acquire("image-7")) {
                assertSame(engine.created.get(0), revived.get());
            }
        }
        assertEquals(1, engine.factoryCalls.get());
        engine.assertNoViolations();
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
