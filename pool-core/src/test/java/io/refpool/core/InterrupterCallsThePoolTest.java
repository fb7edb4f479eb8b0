package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An interrupter calls {@code flush()} or {@code close()} on its pool. A close waits for the
 * interrupted call, and the call for its interrupter, so neither may wait for a close: both return,
 * the call ends, and the close finishes, its engine disposed once.
 */
class InterrupterCallsThePoolTest {
    private static final long BOUND_SECONDS = 10;

    static final class Engine {
        final CountDownLatch running = new CountDownLatch(1);
        final CountDownLatch stop = new CountDownLatch(1);

        String runaway() throws InterruptedException {
            running.countDown();
            assertTrue(stop.await(BOUND_SECONDS, TimeUnit.SECONDS), "never stopped");
            return "stopped";
        }
    }

    private final CountDownLatch interrupterReturned = new CountDownLatch(1);
    private final Map<Engine, Integer> disposals = new ConcurrentHashMap<>();
    private final AtomicReference<Engine> used = new AtomicReference<>();

    /** A pool whose interrupter runs {@code inInterrupter}, then stops the engine. */
    private RefPool<String, Engine> pool(AttachMode mode, Consumer<RefPool<String, Engine>> inInterrupter) {
        AtomicReference<RefPool<String, Engine>> self = new AtomicReference<>();
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(10))
                .disposer((String key, Engine engine, DisposalCause cause) -> disposals.merge(engine, 1, Integer::sum))
                .interrupter((String key, Engine engine) -> {
                    try {
                        inInterrupter.accept(self.get());
                    } finally {
                        engine.stop.countDown();
                        interrupterReturned.countDown();
                    }
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Engine());
        self.set(pool);
        return pool;
    }

    /** {@return the outcome of {@code call}, run on a new thread} */
    private static CompletableFuture<Object> onNewThread(Callable<Object> call) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        new Thread(() -> {
                    try {
                        outcome.complete(call.call());
                    } catch (Throwable t) {
                        outcome.completeExceptionally(t);
                    }
                })
                .start();
        return outcome;
    }

    private Object runaway(Engine engine) throws InterruptedException {
        used.set(engine);
        return engine.runaway();
    }

    /** The interrupter returned, the call ended, and every close finishes with the engine disposed once. */
    private void allEnd(RefPool<String, Engine> pool, CompletableFuture<Object> call, String what) throws Exception {
        assertTrue(interrupterReturned.await(BOUND_SECONDS, TimeUnit.SECONDS), what);
        assertEquals("stopped", call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        pool.close(); // joins a close under way
        assertEquals(Map.of(used.get(), 1), disposals, "the engine, disposed once");
    }

    static Stream<Arguments> flushOrClose(AttachMode... modes) {
        Consumer<RefPool<String, Engine>> flush = RefPool::flush;
        Consumer<RefPool<String, Engine>> close = RefPool::close;
        return Stream.of(modes)
                .flatMap(mode -> Stream.of(Arguments.of(mode, "flush()", flush), Arguments.of(mode, "close()", close)));
    }

    static Stream<Arguments> sharedModes() {
        return flushOrClose(AttachMode.SHARED, AttachMode.PER_OBJECT);
    }

    /** {@code close(Duration)} at its limit runs the interrupter, on the closing thread. */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("sharedModes")
    void anInterrupterOfABoundedCloseThatCallsThePoolReturns(
            AttachMode mode, String name, Consumer<RefPool<String, Engine>> inInterrupter) throws Exception {
        RefPool<String, Engine> pool = pool(mode, inInterrupter);
        Engine engine = pool.call("k", idleAfter -> idleAfter); // the engine the call below takes
        CompletableFuture<Object> call = onNewThread(() -> pool.call("k", this::runaway));
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS), "the function runs");
        CompletableFuture<Boolean> bounded = CompletableFuture.supplyAsync(() -> pool.close(Duration.ofMillis(50)));
        allEnd(
                pool,
                call,
                "the interrupter's " + name + " returned (it waited for the close, which waits for its call)");
        bounded.get(BOUND_SECONDS, TimeUnit.SECONDS);
    }

    static Stream<Arguments> closes() {
        Consumer<RefPool<String, Engine>> close = RefPool::close;
        Consumer<RefPool<String, Engine>> closeWithin = pool -> pool.close(Duration.ofHours(1));
        return Stream.of(AttachMode.values())
                .flatMap(mode ->
                        Stream.of(Arguments.of(mode, "close()", close), Arguments.of(mode, "close(1 h)", closeWithin)));
    }

    /**
     * Nobody closes the pool; the call's own limit runs the interrupter, which closes it: the close
     * waits for the call, so it runs on a thread of its own, and the interrupter returns at once.
     */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("closes")
    void anInterrupterThatClosesAnOpenPoolReturns(
            AttachMode mode, String name, Consumer<RefPool<String, Engine>> inInterrupter) throws Exception {
        RefPool<String, Engine> pool = pool(mode, inInterrupter);
        CompletableFuture<Object> call = onNewThread(() -> pool.call("k", Duration.ofMillis(50), this::runaway));
        allEnd(
                pool,
                call,
                "the interrupter's " + name + " returned (run there, the close waits for the call it stops)");
    }
}
