package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.InterrupterCallsThePoolTest.Engine;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An interrupter that first stops its engine, so the function returns and the call waits for the
 * interrupter, and only then calls {@code close()} or {@code flush()}: the close waits for the call,
 * which waits for the interrupter, so neither may wait for the close. Both return at once.
 */
class InterrupterAfterItsFunctionReturnedTest {

    private static final long BOUND_SECONDS = 10;

    private final CountDownLatch interrupterReturned = new CountDownLatch(1);
    private final AtomicReference<Thread> caller = new AtomicReference<>();
    private final AtomicReference<Throwable> inInterrupterFailed = new AtomicReference<>();
    private final AtomicReference<Thread> interrupterThread = new AtomicReference<>();
    private final CountDownLatch callParked = new CountDownLatch(1);

    /** The interrupter returned, or a description of where it is stuck (its call parked for it first). */
    private void assertInterrupterReturned(String what) throws Exception {
        if (interrupterReturned.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
            return;
        }
        assertEquals(0, callParked.getCount(), "the call had parked waiting for its interrupter");
        throw new AssertionError(what + "; the interrupter thread is stuck at: "
                + io.refpool.testkit.TestKit.describeStack(interrupterThread.get()));
    }

    /** Waits (bounded) until the calling thread parks waiting for the interrupter's outcome. */
    private static void awaitParkedForOutcome(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        while (System.nanoTime() < deadline) {
            Object blocker = LockSupport.getBlocker(t);
            if (blocker != null && blocker.getClass().getName().endsWith("RunControl$Run")) {
                return;
            }
            Thread.onSpinWait();
            Thread.yield();
        }
        throw new AssertionError("the call never waited for its interrupter");
    }

    private RefPool<String, Engine> pool(AttachMode mode, Consumer<RefPool<String, Engine>> inInterrupter) {
        AtomicReference<RefPool<String, Engine>> self = new AtomicReference<>();
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(10))
                .interrupter((String key, Engine engine) -> {
                    interrupterThread.set(Thread.currentThread());
                    try {
                        engine.stop.countDown(); // stop the engine first: the function returns
                        awaitParkedForOutcome(caller.get()); // its thread now waits for this interrupter
                        callParked.countDown();
                        inInterrupter.accept(self.get()); // then use the pool, as the docs allow
                    } catch (Throwable t) {
                        inInterrupterFailed.set(t);
                    } finally {
                        interrupterReturned.countDown();
                    }
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Engine());
        self.set(pool);
        return pool;
    }

    private CompletableFuture<Object> onNewThread(Callable<Object> call) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                outcome.complete(call.call());
            } catch (Throwable e) {
                outcome.completeExceptionally(e);
            }
        });
        t.setDaemon(true);
        caller.set(t);
        t.start();
        return outcome;
    }

    /** The call's own limit runs the interrupter; it stops the engine, then closes the pool. */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anInterrupterThatStopsItsEngineThenClosesThePoolReturns(AttachMode mode) throws Exception {
        RefPool<String, Engine> pool = pool(mode, RefPool::close);
        CompletableFuture<Object> call = onNewThread(() -> pool.call("k", Duration.ofMillis(50), Engine::runaway));
        assertInterrupterReturned(
                "the interrupter's close() did not return (Interrupter javadoc: it starts the close on a thread of its own)");
        assertEquals(null, inInterrupterFailed.get());
        assertEquals("stopped", call.get(BOUND_SECONDS, TimeUnit.SECONDS));
    }

    /** close(Duration) at its limit runs the interrupter; it stops the engine, then flushes. */
    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void anInterrupterOfABoundedCloseThatStopsItsEngineThenFlushesReturns(AttachMode mode) throws Exception {
        RefPool<String, Engine> pool = pool(mode, RefPool::flush);
        Engine engine = pool.call("k", e -> e);
        CompletableFuture<Object> call = onNewThread(() -> pool.call("k", Engine::runaway));
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS), "the function runs");
        CompletableFuture<Boolean> bounded = new CompletableFuture<>();
        Thread closer = new Thread(() -> bounded.complete(pool.close(Duration.ofMillis(50))));
        closer.setDaemon(true);
        closer.start();
        assertInterrupterReturned(
                "the interrupter's flush() did not return (it returns at once while the pool closes)");
        assertEquals(null, inInterrupterFailed.get());
        assertEquals("stopped", call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        bounded.get(BOUND_SECONDS, TimeUnit.SECONDS); // returned at its limit (false: the call was still attached)
        pool.close(); // joins the close, which finishes now the call returned
    }
}
