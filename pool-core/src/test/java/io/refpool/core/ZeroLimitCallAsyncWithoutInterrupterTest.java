package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Without an interrupter, {@code callAsync(key, Duration.ZERO, fn)} takes only what is free at
 * once: with the object, the gate and the section free, its function runs, whenever the call
 * executor starts it; with any of them busy, the call fails with a {@link WaitTimeoutException}.
 */
class ZeroLimitCallAsyncWithoutInterrupterTest {
    private static Object outcome(CompletableFuture<Object> call) throws Exception {
        try {
            return call.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void everythingFreeRunsTheFunctionHoweverLateTheExecutorStartsIt(AttachMode mode) throws Exception {
        LinkedBlockingQueue<Runnable> queued = new LinkedBlockingQueue<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .callExecutor(queued::add)
                .build();
        Handle<Object> live = pool.attached(() -> pool.acquire("k")); // live, its section free
        CompletableFuture<Object> call =
                pool.callAsync("k", Duration.ZERO, engine -> (Object) "ran").toCompletableFuture();
        Runnable function = queued.poll(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        Thread worker = new Thread(function, "call-executor"); // starts it after callAsync returned
        worker.start();
        worker.join();
        assertEquals("ran", outcome(call));
        live.close();
        pool.close();
    }

    /** In {@code PER_OBJECT} mode, the mode in which {@code callAsync} takes the object's section. */
    @Test
    void aBusySectionFailsTheCallWithoutRunningIt() throws Exception {
        LinkedBlockingQueue<Runnable> queued = new LinkedBlockingQueue<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(AttachMode.PER_OBJECT)
                .callExecutor(queued::add)
                .build();
        Handle<Object> live = pool.attached(() -> pool.acquire("k"));
        CompletableFuture<Object> call;
        try (Guard section = pool.attached(() -> live.section())) {
            call = pool.callAsync("k", Duration.ZERO, engine -> (Object) "ran").toCompletableFuture();
            assertInstanceOf(WaitTimeoutException.class, outcome(call));
        }
        assertTrue(queued.isEmpty(), "the function was never handed over");
        live.close();
        pool.close();
        assertThrows(ExecutionException.class, call::get);
    }
}
