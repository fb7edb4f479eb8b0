package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An interrupter run by {@code close(Duration)} at its limit, in a mode where it may use the pool,
 * calls {@code flush()} or {@code close()}: the close waits for the interrupted call, and the call
 * for its interrupter, so neither may wait for the close. Both return, and the close finishes.
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

    static java.util.stream.Stream<Arguments> modesAndCalls() {
        Consumer<RefPool<String, Engine>> flush = RefPool::flush;
        Consumer<RefPool<String, Engine>> close = RefPool::close;
        return java.util.stream.Stream.of(AttachMode.SHARED, AttachMode.PER_OBJECT)
                .flatMap(mode -> java.util.stream.Stream.of(
                        Arguments.of(mode, "flush()", flush), Arguments.of(mode, "close()", close)));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("modesAndCalls")
    void anInterrupterOfABoundedCloseThatCallsThePoolReturnsAndTheCloseFinishes(
            AttachMode mode, String name, Consumer<RefPool<String, Engine>> inInterrupter) throws Exception {
        CountDownLatch interrupterReturned = new CountDownLatch(1);
        Map<Engine, Integer> disposals = new ConcurrentHashMap<>();
        @SuppressWarnings("unchecked")
        RefPool<String, Engine>[] self = new RefPool[1];
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(10))
                .disposer((String key, Engine engine, DisposalCause cause) -> disposals.merge(engine, 1, Integer::sum))
                .interrupter((String key, Engine engine) -> {
                    try {
                        inInterrupter.accept(self[0]);
                    } finally {
                        engine.stop.countDown();
                        interrupterReturned.countDown();
                    }
                    return Interrupter.Outcome.RETIRE;
                })
                .build(key -> new Engine());
        self[0] = pool;
        Engine engine = pool.call("k", e -> e);
        CompletableFuture<Object> call = new CompletableFuture<>();
        new Thread(() -> {
                    try {
                        call.complete(pool.call("k", Engine::runaway));
                    } catch (Throwable t) {
                        call.completeExceptionally(t);
                    }
                })
                .start();
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS), "the function runs");

        CompletableFuture<Boolean> bounded = CompletableFuture.supplyAsync(() -> pool.close(Duration.ofMillis(50)));
        assertTrue(
                interrupterReturned.await(BOUND_SECONDS, TimeUnit.SECONDS),
                "the interrupter's " + name + " returned (it waited for the close, which waits for its call)");
        assertEquals("stopped", call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        bounded.get(BOUND_SECONDS, TimeUnit.SECONDS);
        pool.close();
        assertEquals(Map.of(engine, 1), disposals, "the engine, disposed once");
    }
}
