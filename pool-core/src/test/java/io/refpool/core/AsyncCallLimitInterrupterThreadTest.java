package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code callAsync(key, timeout, fn)} bounds its function too when the pool has an interrupter: its limit
 * passing must run the interrupter on a thread of the pool's own, as a synchronous call's does,
 * not on the JVM's one timer thread (Interrupter's contract).
 */
class AsyncCallLimitInterrupterThreadTest {
    private static final long BOUND_SECONDS = 10;

    @Test
    void anAsyncCallsLimitInterruptsOnAThreadOfThePoolAndHoldsNoTimer() throws Exception {
        CountDownLatch interrupting = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Thread> interruptedOn = new AtomicReference<>();
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .interrupter((String key, Object value) -> {
                    interruptedOn.set(Thread.currentThread());
                    interrupting.countDown();
                    assertTrue(mayReturn.await(BOUND_SECONDS, TimeUnit.SECONDS));
                    stopped.countDown();
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Object());
        // a limit long enough for the executor to start the function first on a loaded machine: the
        // function then waits for the interrupter, which the limit calls
        CompletableFuture<Object> call = pool.callAsync("k", Duration.ofSeconds(2), value -> {
                    started.countDown();
                    assertTrue(stopped.await(BOUND_SECONDS, TimeUnit.SECONDS), "never stopped");
                    return value;
                })
                .toCompletableFuture();
        try {
            assertTrue(started.await(BOUND_SECONDS, TimeUnit.SECONDS), "the function started");
            assertTrue(interrupting.await(BOUND_SECONDS, TimeUnit.SECONDS), "the limit passed: the interrupter runs");
            CountDownLatch otherTimerFired = new CountDownLatch(1);
            try (CancellationSource other = new CancellationSource()) {
                other.token().register(otherTimerFired::countDown);
                other.cancelAfter(Duration.ofMillis(1));
                boolean fired = otherTimerFired.await(BOUND_SECONDS, TimeUnit.SECONDS);
                assertTrue(
                        interruptedOn.get().getName().startsWith("refpool-interrupter-"),
                        "interrupter ran on " + interruptedOn.get().getName());
                assertTrue(fired, "another timer fired while the interrupter still ran");
            }
        } finally {
            mayReturn.countDown();
            call.handle((v, f) -> null).get(BOUND_SECONDS, TimeUnit.SECONDS);
            pool.close();
        }
    }
}
