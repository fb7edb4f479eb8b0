package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A report reaches the error listener, or the log if the listener throws, and never fails the pool
 * code that made it: the pool's default listener is its {@code System.Logger} "io.refpool", and a
 * logging backend that throws (an application's filter or handler, an {@code OutOfMemoryError}
 * while formatting) must not escape {@code Handle.close()} or leave a call waiting for its
 * interrupter's outcome for ever. When the listener throws, the failure it was told of is logged
 * with its own cause, not only the listener's. The backend here is {@code java.util.logging}, reached
 * reflectively (the test module does not read it).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReportNeverFailsItsCallerTest {
    /** An {@code Error} of a logging backend. */
    static final class BackendError extends Error {
        BackendError(String message) {
            super(message);
        }
    }

    /** Runs {@code body} with a filter on the "io.refpool" logger that throws an {@code Error}. */
    static void withThrowingLogFilter(Runnable body) throws Exception {
        Class<?> loggerClass = Class.forName("java.util.logging.Logger");
        Class<?> filterClass = Class.forName("java.util.logging.Filter");
        Object log = loggerClass.getMethod("getLogger", String.class).invoke(null, "io.refpool");
        Object filter =
                Proxy.newProxyInstance(filterClass.getClassLoader(), new Class<?>[] {filterClass}, (p, m, a) -> {
                    if (m.getName().equals("isLoggable")) {
                        throw new BackendError("the log backend failed");
                    }
                    return m.getName().equals("hashCode") ? 0 : m.getName().equals("equals") ? p == a[0] : "filter";
                });
        Object before = loggerClass.getMethod("getFilter").invoke(log);
        loggerClass.getMethod("setFilter", filterClass).invoke(log, filter);
        try {
            body.run();
        } finally {
            loggerClass.getMethod("setFilter", filterClass).invoke(log, before);
        }
    }

    /** Runs {@code body} with the "io.refpool" System.Logger (java.util.logging here) captured as text. */
    static String logged(Runnable body) throws Exception {
        Class<?> loggerClass = Class.forName("java.util.logging.Logger");
        Class<?> handlerClass = Class.forName("java.util.logging.Handler");
        Object log = loggerClass.getMethod("getLogger", String.class).invoke(null, "io.refpool");
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        Object handler = Class.forName("java.util.logging.StreamHandler")
                .getConstructor(OutputStream.class, Class.forName("java.util.logging.Formatter"))
                .newInstance(
                        text,
                        Class.forName("java.util.logging.SimpleFormatter")
                                .getConstructor()
                                .newInstance());
        loggerClass.getMethod("addHandler", handlerClass).invoke(log, handler);
        try {
            body.run();
        } finally {
            handlerClass.getMethod("flush").invoke(handler);
            loggerClass.getMethod("removeHandler", handlerClass).invoke(log, handler);
        }
        return text.toString(StandardCharsets.UTF_8);
    }

    private static void assertNothingEscaped(Throwable escaped) {
        assertDoesNotThrow(
                () -> {
                    if (escaped != null) {
                        throw escaped;
                    }
                },
                "Handle.close() threw the log backend's failure");
    }

    @Test
    void aDisposerFailureWithTheDefaultListenerNeverEscapesHandleCloseWhenLoggingFails() throws Exception {
        Engine engine = new Engine();
        engine.afterDispose = s -> {
            if (s.key.equals("a")) {
                throw new IllegalStateException("the disposer failed");
            }
        };
        // the default listener: no errorListener(...)
        RefPool<String, Session> pool = RefPool.<String, Session>builder(engine)
                .disposer(engine::accept)
                .build();
        Throwable[] escaped = new Throwable[1];
        withThrowingLogFilter(() -> {
            try (Attachment attached = pool.attach()) {
                Handle<Session> a = pool.acquire("a");
                try {
                    a.close(); // attached, count 0, no idle cache: disposed now, its disposer throws
                } catch (Throwable t) {
                    escaped[0] = t;
                }
            }
        });
        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertNothingEscaped(escaped[0]);
    }

    @Test
    void aCascadeGoesOnWhenTheListenerAndTheLogBackendThrow() throws Exception {
        Engine engine = new Engine();
        java.util.Map<String, Handle<Session>> children = new java.util.concurrent.ConcurrentHashMap<>();
        engine.afterDispose = s -> {
            Handle<Session> child = children.remove(s.key);
            if (child != null) {
                child.close(); // the disposer of a closes its handle to b: a cascade, on the same work list
            }
            if (s.key.equals("b")) {
                throw new IllegalStateException("b's disposer failed");
            }
        };
        RefPool<String, Session> pool = engine.build(RefPool.<String, Session>builder(engine)
                .disposer(engine::accept)
                .errorListener(e -> {
                    throw new IllegalStateException("the listener failed");
                }));
        Throwable[] escaped = new Throwable[1];
        withThrowingLogFilter(() -> {
            try (Attachment attached = pool.attach()) {
                Handle<Session> a = pool.acquire("a");
                children.put("a", pool.acquire("b"));
                children.put("b", pool.acquire("c"));
                try {
                    a.close();
                } catch (Throwable t) {
                    escaped[0] = t;
                }
            }
        });
        pool.close();
        assertEquals(3, engine.created.size());
        engine.assertAllDisposedExactlyOnce();
        assertNothingEscaped(escaped[0]);
    }

    @Test
    void aCallWhoseInterrupterThrowsIsNotLeftWaitingForItForEver() throws Exception {
        java.util.concurrent.CountDownLatch interrupted = new java.util.concurrent.CountDownLatch(1);
        // the default listener: no errorListener(...)
        RefPool<String, Object> pool = RefPool.newBuilder()
                .name("interrupter-and-log-throw")
                .interrupter((String k, Object o) -> {
                    interrupted.countDown();
                    throw new IllegalStateException("the engine refused to stop");
                })
                .build(key -> new Object());
        pool.call("k", o -> o); // the object exists: the timed call's limit is the function's
        java.util.concurrent.CompletableFuture<Object> call = new java.util.concurrent.CompletableFuture<>();
        Thread caller = new Thread(
                () -> {
                    try {
                        call.complete(pool.call("k", java.time.Duration.ofMillis(300), o -> {
                            if (!interrupted.await(10, TimeUnit.SECONDS)) {
                                throw new AssertionError("the interrupter was not called");
                            }
                            return "returned";
                        }));
                    } catch (Throwable t) {
                        call.complete(t);
                    }
                },
                "caller");
        Object[] outcome = new Object[1];
        withThrowingLogFilter(
                () -> { // in place until the call returned: its report cannot miss it
                    caller.start();
                    try {
                        outcome[0] = call.handle((v, t) -> v).get(10, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.TimeoutException stuck) {
                        StringBuilder stack = new StringBuilder();
                        for (StackTraceElement e : caller.getStackTrace()) {
                            stack.append("\n    at ").append(e);
                        }
                        outcome[0] = "STUCK: the call never returned; caller thread:" + stack;
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });
        assertEquals("returned", outcome[0]);
        pool.close();
    }

    @Test
    void aLeaveHooksFailureIsNotLostWhenTheListenerThrows() throws Exception {
        String logged = logged(() -> {
            try (RefPool<String, Object> pool = RefPool.newBuilder()
                    .name("listener-throws")
                    .errorListener(error -> {
                        throw new IllegalStateException("the listener's own bug");
                    })
                    .sectionHooks(SectionHooks.of((String k, Object o) -> {}, (String k, Object o) -> {
                        throw new OutOfMemoryError("the leave hook's own failure");
                    }))
                    .build(key -> new Object())) {
                assertEquals("ok", pool.call("k", o -> "ok")); // the hook's failure goes only to the listener
            }
        });
        assertTrue(logged.contains("the listener's own bug"), logged);
        assertTrue(logged.contains("the leave hook's own failure"), "the hook's failure is lost; the log:\n" + logged);
    }

    @Test
    void anInterruptersFailureIsNotLostWhenTheListenerThrows() throws Exception {
        String logged = logged(() -> {
            CountDownLatch interrupted = new CountDownLatch(1);
            try (RefPool<String, Object> pool = RefPool.newBuilder()
                    .name("listener-throws-2")
                    .errorListener(error -> {
                        throw new IllegalStateException("the listener's own bug");
                    })
                    .interrupter((String k, Object o) -> {
                        interrupted.countDown();
                        throw new StackOverflowError("the interrupter's own failure");
                    })
                    .build(key -> new Object())) {
                assertEquals("ok", pool.call("k", Duration.ofMillis(50), o -> {
                    assertTrue(interrupted.await(10, TimeUnit.SECONDS));
                    return "ok";
                }));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertTrue(logged.contains("the listener's own bug"), logged);
        assertTrue(
                logged.contains("the interrupter's own failure"),
                "the interrupter's failure is lost; the log:\n" + logged);
    }
}
