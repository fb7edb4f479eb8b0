package io.refpool.core;

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
 * A zero limit of {@code callAsync(key, Duration, fn)} with an interrupter must fail the call
 * without running the function, whenever the interrupter threads get scheduled: the limit's
 * cancel is handed to one, and the call must not depend on it running first.
 */
class ZeroLimitCallAsyncInterrupterThreadLateTest {
    private static final long BOUND_SECONDS = 30;

    /** Runs each task on a thread of its own and returns once it finished. */
    private static final Executor FINISHES_BEFORE_RETURNING = task -> {
        Thread thread = new Thread(task, "call-executor");
        thread.start();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    };

    private static ThreadPoolExecutor interrupters() throws Exception {
        Field field = Class.forName("io.refpool.core.internal.OwnThreads$Interrupters")
                .getDeclaredField("EXECUTOR");
        field.setAccessible(true);
        return (ThreadPoolExecutor) field.get(null);
    }

    @Test
    void aZeroLimitFailsTheCallEvenIfTheInterrupterThreadStartsLate() throws Exception {
        ThreadPoolExecutor interrupters = interrupters();
        ThreadFactory original = interrupters.getThreadFactory();
        long keepAlive = interrupters.getKeepAliveTime(TimeUnit.NANOSECONDS);
        // no idle interrupter thread may take the hand-over: let any end, then gate new ones
        interrupters.setKeepAliveTime(1, TimeUnit.NANOSECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        while (interrupters.getPoolSize() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(0, interrupters.getPoolSize(), "idle interrupter threads ended");
        CountDownLatch interrupterThreadsMayRun = new CountDownLatch(1);
        interrupters.setThreadFactory(worker -> original.newThread(() -> {
            try {
                interrupterThreadsMayRun.await(BOUND_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            worker.run();
        }));
        interrupters.setKeepAliveTime(keepAlive, TimeUnit.NANOSECONDS);
        AtomicInteger interrupts = new AtomicInteger();
        RefPool<String, Object> pool = RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10))
                .callExecutor(FINISHES_BEFORE_RETURNING)
                .interrupter((String key, Object engine) -> {
                    interrupts.incrementAndGet();
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Object());
        try {
            pool.call("k", e -> e); // live, idle, free: every wait is free at once
            AtomicInteger ran = new AtomicInteger();

            CompletableFuture<String> call = pool.callAsync("k", Duration.ZERO, e -> {
                        ran.incrementAndGet();
                        return "ran";
                    })
                    .toCompletableFuture();
            interrupterThreadsMayRun.countDown();

            ExecutionException failed = assertThrows(
                    ExecutionException.class,
                    () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS),
                    () -> "the call completed with " + call.getNow(null));
            assertInstanceOf(WaitTimeoutException.class, failed.getCause());
            assertEquals(0, ran.get(), "a zero limit leaves the function no time");
            assertEquals(0, interrupts.get());
        } finally {
            interrupterThreadsMayRun.countDown();
            interrupters.setThreadFactory(original);
            pool.close();
        }
    }
}
