package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.refpool.sync.WaitTimeoutException;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * With an interrupter, the limit of {@code callAsync(key, Duration, fn)} bounds the function too, and
 * a zero limit leaves it no time: the call fails with a {@link WaitTimeoutException} and the
 * function never runs, however fast the call executor is.
 */
class ZeroLimitCallAsyncTest {
    /** Runs each task on a thread of its own and returns once it finished: the fastest executor there is. */
    private static final Executor FINISHES_BEFORE_RETURNING = task -> {
        Thread thread = new Thread(task, "call-executor");
        thread.start();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    };

    @Test
    void aZeroLimitCallAsyncWithAnInterrupterNeverRunsItsFunction() throws Exception {
        assertAZeroLimitCallAsyncNeverRunsItsFunction();
    }

    /**
     * The limit of a call is handed to an interrupter thread when it passes; a zero one must fail
     * the call however late that thread starts, so the interrupter threads are held back here.
     */
    @Test
    void aZeroLimitFailsTheCallEvenIfTheInterrupterThreadStartsLate() throws Exception {
        ThreadPoolExecutor interrupters = interrupters();
        ThreadFactory original = interrupters.getThreadFactory();
        long keepAlive = interrupters.getKeepAliveTime(TimeUnit.NANOSECONDS);
        // no idle interrupter thread may take the hand-over: let any end, then hold new ones back
        interrupters.setKeepAliveTime(1, TimeUnit.NANOSECONDS);
        eventually().until(() -> interrupters.getPoolSize() == 0);
        CountDownLatch interrupterThreadsMayRun = new CountDownLatch(1);
        interrupters.setThreadFactory(worker -> original.newThread(() -> {
            try {
                interrupterThreadsMayRun.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            worker.run();
        }));
        interrupters.setKeepAliveTime(keepAlive, TimeUnit.NANOSECONDS);
        try {
            assertAZeroLimitCallAsyncNeverRunsItsFunction();
        } finally {
            interrupterThreadsMayRun.countDown();
            interrupters.setThreadFactory(original);
        }
    }

    private static ThreadPoolExecutor interrupters() throws ReflectiveOperationException {
        Field field = Class.forName("io.refpool.core.internal.OwnThreads$Interrupters")
                .getDeclaredField("EXECUTOR");
        field.setAccessible(true);
        return (ThreadPoolExecutor) field.get(null);
    }

    private static void assertAZeroLimitCallAsyncNeverRunsItsFunction() throws Exception {
        AtomicInteger interrupts = new AtomicInteger();
        RefPool<String, Object> pool = RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10))
                .callExecutor(FINISHES_BEFORE_RETURNING)
                .interrupter((String key, Object engine) -> {
                    interrupts.incrementAndGet();
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Object());
        pool.call("k", e -> e); // live, idle, free: every wait is free at once
        AtomicInteger ran = new AtomicInteger();

        CompletableFuture<String> call = pool.callAsync("k", Duration.ZERO, e -> {
                    ran.incrementAndGet();
                    return "ran";
                })
                .toCompletableFuture();

        ExecutionException failed = assertThrows(
                ExecutionException.class,
                () -> call.get(30, TimeUnit.SECONDS),
                () -> "the call completed with " + call.getNow(null));
        assertInstanceOf(WaitTimeoutException.class, failed.getCause());
        assertEquals(0, ran.get(), "a zero limit leaves the function no time");
        assertEquals(0, interrupts.get(), "nothing ran for the interrupter to stop");
        pool.close();
    }

    @Test
    void aZeroLimitCallWithAnInterrupterNeverRunsItsFunction() {
        RefPool<String, Object> pool = RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10))
                .interrupter((String key, Object engine) -> Interrupter.Outcome.KEEP)
                .build(key -> new Object());
        pool.call("k", e -> e);
        AtomicInteger ran = new AtomicInteger();
        assertThrows(WaitTimeoutException.class, () -> pool.call("k", Duration.ZERO, e -> ran.incrementAndGet()));
        assertEquals(0, ran.get());
        pool.close();
    }
}
