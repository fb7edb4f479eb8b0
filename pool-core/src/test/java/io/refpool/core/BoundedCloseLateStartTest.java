package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A bounded close that reached its limit ends the calls still in their waits: their functions never
 * start, so no function runs unbounded after the limit, and the close can finish.
 */
class BoundedCloseLateStartTest {
    static final class Engine {
        final CountDownLatch stopped = new CountDownLatch(1);
        final CountDownLatch running = new CountDownLatch(1);

        String runaway() throws InterruptedException {
            running.countDown();
            if (!stopped.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("never stopped");
            }
            throw new IllegalStateException("stopped");
        }
    }

    @Test
    void aCallWaitingForTheSectionWhenABoundedCloseReachesItsLimitFailsAndNeverStartsItsFunction() throws Exception {
        AtomicInteger interrupts = new AtomicInteger();
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .attachMode(AttachMode.PER_OBJECT)
                .idle(cache -> cache.maximumSize(10))
                .interrupter((String key, Engine engine) -> {
                    interrupts.incrementAndGet();
                    engine.stopped.countDown();
                    return Interrupter.Outcome.KEEP;
                })
                .build(key -> new Engine());
        Engine engine = pool.call("k", e -> e);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestKit.Forked<String> first = TestKit.unstarted("runaway", () -> pool.call("k", Engine::runaway));
        TestPoolHooks.Pause firstReturned = hooks.pause(Point.FUNCTION_RETURNED, first.thread);
        first.start();
        assertTrue(engine.running.await(30, TimeUnit.SECONDS));
        AtomicInteger ran = new AtomicInteger();
        TestKit.Forked<Integer> second = fork("queued", () -> pool.call("k", e -> ran.incrementAndGet()));
        awaitParked(second.thread); // in line for the section the runaway holds

        assertFalse(pool.close(Duration.ofMillis(20)), "the runaway still holds its section at the limit");
        assertEquals(1, interrupts.get());
        firstReturned.awaitArrival(); // stopped; it still holds the section
        firstReturned.proceed();

        assertInstanceOf(IllegalStateException.class, first.joinFailure());
        assertInstanceOf(PoolClosedException.class, second.joinFailure(), "the queued call fails as the pool closed");
        assertEquals(0, ran.get(), "a call still waiting at the close's limit must not start its function");
        assertTrue(pool.close(Duration.ofSeconds(30)));
    }
}
