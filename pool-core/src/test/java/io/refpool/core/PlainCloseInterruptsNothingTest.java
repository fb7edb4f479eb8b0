package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A plain {@code close()} waits for running functions and never interrupts one, async or not:
 * only {@code close(Duration)} at its limit calls the interrupter.
 */
class PlainCloseInterruptsNothingTest {
    private static final long BOUND_SECONDS = 10;

    @Test
    void aPlainCloseWaitsForARunningCallAsyncFunctionWithoutInterruptingIt() throws Exception {
        AtomicInteger interrupts = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .interrupter((String key, Object value) -> {
                    interrupts.incrementAndGet();
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Object());
        CompletableFuture<String> call = pool.callAsync("k", io.refpool.sync.CancellationToken.none(), value -> {
                    running.countDown();
                    assertTrue(mayReturn.await(BOUND_SECONDS, TimeUnit.SECONDS));
                    return "done";
                })
                .toCompletableFuture();
        assertTrue(running.await(BOUND_SECONDS, TimeUnit.SECONDS));
        Forked<Void> closing = forkRun("closer", pool::close);
        // parked: the close cancelled what it cancels and now waits for the function
        eventually()
                .until(() -> closing.thread.getState() == Thread.State.WAITING
                        || closing.thread.getState() == Thread.State.TIMED_WAITING);
        assertEquals(0, interrupts.get(), "a plain close interrupts nothing");
        assertFalse(closing.outcome.isDone(), "it waits for the running function");
        mayReturn.countDown();
        assertEquals("done", call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        closing.join();
        assertEquals(0, interrupts.get());
    }
}
