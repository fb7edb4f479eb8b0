package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A callback that throws {@link InterruptedException} has taken the thread's interrupt: the pool,
 * which wraps or reports that failure instead of rethrowing it, sets the interrupt status again on
 * the thread that ran the callback, and goes on as after any other failure of it.
 */
class InterruptedCallbackTest {
    private final Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted(); // a failed assertion must not leak the status into the next test
    }

    private RefPool.Builder<String, Object> builder(AtomicBoolean disposerInterrupted) {
        return RefPool.<String, Object>newBuilder()
                .idle(cache -> cache.maximumSize(100))
                .errorListener(errors::add)
                .disposer((String key, Object value, DisposalCause cause) -> {
                    if (disposed.put(value, cause) != null) {
                        throw new AssertionError("disposed twice: " + value);
                    }
                    if (disposerInterrupted.getAndSet(false)) {
                        throw new InterruptedException("disposer interrupted");
                    }
                });
    }

    @Test
    void aFactoryInterruptedFailsTheAcquireAndKeepsTheInterrupt() {
        AtomicBoolean interruptNext = new AtomicBoolean(true);
        try (RefPool<String, Object> pool = builder(new AtomicBoolean())
                .maxObjects(1)
                .build(key -> {
                    if (interruptNext.getAndSet(false)) {
                        throw new InterruptedException("factory interrupted");
                    }
                    return new Object();
                })) {
            ObjectCreationException failed =
                    assertThrows(ObjectCreationException.class, () -> pool.call("k", value -> value));
            assertInstanceOf(InterruptedException.class, failed.getCause());
            assertTrue(Thread.interrupted(), "the interrupt the factory took is set again");
            assertEquals(PoolError.Kind.FACTORY_FAILED, errors.get(0).kind());
            pool.call("k", value -> value); // the permit came back: the next acquire creates
            assertEquals(0, pool.stats().live());
        }
        assertEquals(1, disposed.size());
    }

    @Test
    void aValidatorInterruptedFailsTheCheckAndKeepsTheInterrupt() {
        AtomicBoolean interruptNext = new AtomicBoolean();
        try (RefPool<String, Object> pool = builder(new AtomicBoolean())
                .validator((String key, Object value) -> {
                    if (interruptNext.getAndSet(false)) {
                        throw new InterruptedException("validator interrupted");
                    }
                    return true;
                })
                .build(key -> new Object())) {
            Object first = pool.call("k", value -> value);
            interruptNext.set(true);
            Object second = pool.call("k", value -> value);
            assertTrue(Thread.interrupted(), "the interrupt the validator took is set again");
            assertNotSame(first, second, "the object that failed its check was replaced");
            assertEquals(DisposalCause.FAILED_VALIDATION, disposed.get(first));
            assertEquals(PoolError.Kind.REVIVE_CHECK_FAILED, errors.get(0).kind());
        }
    }

    @Test
    void aDisposerInterruptedDuringCloseKeepsTheInterruptAndTheCloseDisposesTheRest() {
        AtomicBoolean interruptNext = new AtomicBoolean();
        RefPool<String, Object> pool = builder(interruptNext).build(key -> new Object());
        for (String key : List.of("a", "b", "c")) {
            pool.call(key, value -> value); // each goes idle
        }
        interruptNext.set(true);
        pool.close();
        assertTrue(Thread.interrupted(), "the interrupt the disposer took is set again");
        assertEquals(3, disposed.size(), "the close disposed every object");
        assertEquals(PoolError.Kind.DISPOSER_FAILED, errors.get(0).kind());
    }

    @Test
    void aDisposerInterruptedDuringInvalidateKeepsTheInterrupt() {
        AtomicBoolean interruptNext = new AtomicBoolean();
        try (RefPool<String, Object> pool = builder(interruptNext).build(key -> new Object())) {
            Object idle = pool.call("k", value -> value);
            interruptNext.set(true);
            assertTrue(pool.invalidate("k"));
            assertTrue(Thread.interrupted(), "the interrupt the disposer took is set again");
            assertEquals(DisposalCause.INVALIDATED, disposed.get(idle));
            assertFalse(Thread.currentThread().isInterrupted());
        }
    }
}
