package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Factory and disposer failures go to the error listener (the caller gets a factory's exception
 * too), and a drain never stops on one: the rest of the batch is still applied and disposed.
 */
class PoolErrorsTest {
    private static final int BATCH = 10;

    /** Opens {@link #BATCH} objects and closes their handles off-attachment: one pending batch. */
    private static void pendingBatchOfLastReleases(RefPool<String, Session> pool) throws Exception {
        List<Handle<Session>> handles = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < BATCH; i++) {
                handles.add(pool.acquire("k" + i));
            }
        }
        TestKeyedPoolFixtures.onOtherThread(() -> {
            handles.forEach(Handle::close);
            return null;
        });
        assertEquals(BATCH, pool.stats().pendingDecrements());
    }

    @Test
    void aFactoryExceptionReachesTheCallerAndTheListener() {
        Engine engine = new Engine();
        IllegalStateException refused = new IllegalStateException("the engine refused a session");
        engine.beforeCreate = key -> {
            throw refused;
        };
        RefPool<String, Session> pool = engine.build(engine.builder());
        try (Attachment attached = pool.attach()) {
            assertSame(refused, assertThrows(IllegalStateException.class, () -> pool.acquire("tenant-7")));
        }
        PoolError error = engine.errors(PoolError.Kind.FACTORY_FAILED).get(0);
        assertEquals("tenant-7", error.key());
        assertSame(refused, error.cause());
        assertTrue(error.message().contains("'tenant-7'"), error.message());
        assertEquals(0, pool.stats().creations());
        assertEquals(0, pool.stats().live());
        pool.close();
    }

    @Test
    void aDisposerExceptionIsReportedAndTheObjectCountsAsDisposed() {
        Engine engine = new Engine();
        IllegalStateException stuck = new IllegalStateException("the session would not close");
        engine.afterDispose = session -> {
            throw stuck;
        };
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        try (Attachment attached = pool.attach()) {
            pool.acquire("a").close();
            try (Handle<Session> next = pool.acquire("b")) {
                assertEquals("b", next.get().key, "the failed disposal still gave its capacity back");
            }
        }
        assertEquals(2, pool.stats().disposals());
        List<PoolError> errors = engine.errors(PoolError.Kind.DISPOSER_FAILED);
        assertEquals(2, errors.size());
        assertEquals("a", errors.get(0).key());
        assertSame(stuck, errors.get(0).cause());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aDrainWithThrowingDisposersDisposesTheRestOfTheBatch() throws Exception {
        Engine engine = new Engine();
        engine.afterDispose = session -> {
            if (session.serial % 3 == 0) {
                throw new IllegalStateException("the session " + session + " would not close");
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder());
        pendingBatchOfLastReleases(pool);

        pool.attach().close(); // applies the batch; the failures do not escape to the attacher

        engine.assertAllDisposedExactlyOnce();
        assertEquals(BATCH, pool.stats().disposals());
        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(BATCH / 3, engine.errors(PoolError.Kind.DISPOSER_FAILED).size());
        pool.close();
    }

    @Test
    void aDrainWithDisposersThrowingCheckedExceptionsDisposesTheRestOfTheBatch() throws Exception {
        Engine engine = new Engine();
        engine.afterDispose = session -> {
            if (session.serial % 3 == 0) {
                throw TestKeyedPoolFixtures.sneakyThrow(new IOException("the session's socket is gone"));
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(BATCH));
        pendingBatchOfLastReleases(pool);

        pool.attach().close(); // a checked exception from a disposer escapes neither the drain nor attach

        engine.assertAllDisposedExactlyOnce();
        assertEquals(0, pool.stats().pendingDecrements());
        List<PoolError> errors = engine.errors(PoolError.Kind.DISPOSER_FAILED);
        assertEquals(BATCH / 3, errors.size());
        assertTrue(errors.get(0).cause() instanceof IOException, errors.get(0).toString());
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < BATCH; i++) {
                pool.acquire("again" + i); // every permit came back
            }
        }
        pool.close();
    }

    @Test
    void aFactoryThrowingACheckedExceptionLeavesNothingStuck() {
        Engine engine = new Engine();
        Exception checked = new IOException("the engine's socket closed");
        engine.beforeCreate = key -> {
            if (engine.factoryCalls.get() == 1) {
                throw TestKeyedPoolFixtures.sneakyThrow(checked);
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));

        try (Attachment attached = pool.attach()) {
            Throwable thrown = assertThrows(ObjectCreationException.class, () -> pool.acquire("k"));
            assertSame(checked, thrown.getCause(), "the caller gets what the factory threw, as the cause");
            try (Handle<Session> handle = pool.acquire("k")) {
                assertEquals("k", handle.get().key, "the key is not stuck and its permit was given back");
            }
        }
        assertSame(checked, engine.errors(PoolError.Kind.FACTORY_FAILED).get(0).cause());
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void aThrowingErrorListenerDoesNotStopTheDrain() throws Exception {
        Engine engine = new Engine();
        engine.afterDispose = session -> {
            throw new IllegalStateException("the session " + session + " would not close");
        };
        RefPool<String, Session> pool = engine.build(engine.builder().errorListener(error -> {
            throw new IllegalStateException("the listener is broken too");
        }));
        pendingBatchOfLastReleases(pool);

        pool.attach().close();

        engine.assertAllDisposedExactlyOnce();
        pool.close();
    }

    @Test
    void theDefaultListenerLogsToTheRefpoolSystemLoggerAtWarning() throws Exception {
        // System.Logger is backed by java.util.logging here, reached reflectively (see the helper)
        String logged = ReportNeverFailsItsCallerTest.logged(() -> {
            RefPool<String, String> pool = RefPool.<String, String>builder(key -> {
                        throw new IllegalStateException("the engine refused a session");
                    })
                    .build();
            try (Attachment attached = pool.attach()) {
                assertThrows(IllegalStateException.class, () -> pool.acquire("tenant-7"));
            }
            pool.close();
        });
        assertTrue(logged.contains("WARNING: the factory failed for key 'tenant-7'"), logged);
        assertTrue(logged.contains("java.lang.IllegalStateException: the engine refused a session"), logged);
    }
}
