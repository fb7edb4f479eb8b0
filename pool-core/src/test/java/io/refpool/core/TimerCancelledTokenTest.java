package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A caller's {@code stopTheWorld(token)} whose token a source's plain {@code cancelAfter} cancels
 * lets the shared attaches queued behind it through, and their continuations run where the token
 * is cancelled: another caller's {@code attachAsync} function, another's factory. That is never the
 * JVM's one timer thread, where a function waiting with a limit (a timed section) would wait for
 * ever, its own limit needing the thread it occupies, and every other timer with it.
 */
class TimerCancelledTokenTest {

    /** A stop of the world, parked in line behind the holder until {@code limit} is cancelled. */
    private static TestKit.Forked<Void> stopTheWorldInLine(RefPool<String, Session> pool, CancellationSource limit) {
        TestKit.Forked<Void> stopper = TestKit.forkRun("stopper", () -> {
            try (Attachment world = pool.stopTheWorld(limit.token())) {
                fail("the holder never left");
            } catch (CancellationException expected) {
                // the caller's own limit
            }
        });
        TestKit.awaitParked(stopper.thread);
        return stopper;
    }

    @ParameterizedTest(name = "{0} bias {1}")
    @CsvSource({"SHARED,true", "SHARED,false", "PER_OBJECT,true", "PER_OBJECT,false"})
    void aTimedWaitInAnAttachAsyncFunctionGrantedByATimerCancelStillTimesOut(AttachMode mode, boolean bias)
            throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(mode));
        pool.core().setGateBiasForTests(bias);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        // H: attached (so a stop of the world waits), holding x's section
        TestKit.Forked<Void> holder = TestKit.forkRun("holder", () -> {
            try (Attachment a = pool.attach();
                    Handle<Session> h = pool.acquire("x");
                    Guard section = h.section()) {
                holding.countDown();
                letGo.await();
            }
        });
        holding.await();
        CancellationSource stopLimit = new CancellationSource();
        TestKit.Forked<Void> stopper = stopTheWorldInLine(pool, stopLimit);
        AtomicReference<String> ranOn = new AtomicReference<>();
        CompletableFuture<String> call = pool.attachAsync(CancellationToken.none(), attachment -> {
                    ranOn.set(Thread.currentThread().getName());
                    try (Handle<Session> h = pool.acquire("x");
                            Guard section = h.section(Duration.ofMillis(100))) {
                        return "section";
                    }
                })
                .toCompletableFuture();
        stopLimit.cancelAfter(Duration.ofMillis(50)); // an ordinary caller's limit
        try {
            Throwable failure = null;
            try {
                call.get(5, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                failure = e.getCause();
            } catch (TimeoutException stuck) {
                fail("the function's 100 ms section wait did not end in 5 s; it runs on '" + ranOn.get() + "'");
            }
            assertInstanceOf(WaitTimeoutException.class, failure, "the section wait times out");
            assertNotEquals("refpool-cancellation-timer", ranOn.get());
        } finally {
            letGo.countDown();
            holder.join();
            stopper.join();
            call.handle((v, t) -> null).get(5, TimeUnit.SECONDS);
        }
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(0, engine.errors.size());
    }

    /** The same road runs another caller's factory (acquireAsync let through) on the timer thread. */
    @ParameterizedTest(name = "{0} bias {1}")
    @CsvSource({"SHARED,true", "SHARED,false", "PER_OBJECT,true", "PER_OBJECT,false"})
    void anAcquireAsyncLetThroughByATimerCancelDoesNotRunItsFactoryOnTheTimerThread(AttachMode mode, boolean bias)
            throws Exception {
        Engine engine = new Engine();
        AtomicReference<String> factoryRanOn = new AtomicReference<>();
        engine.beforeCreate = key -> {
            if (key.equals("y")) {
                factoryRanOn.set(Thread.currentThread().getName());
            }
        };
        RefPool<String, Session> pool = engine.build(engine.builder().attachMode(mode));
        pool.core().setGateBiasForTests(bias);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        TestKit.Forked<Void> holder = TestKit.forkRun("holder", () -> {
            try (Attachment a = pool.attach()) {
                holding.countDown();
                letGo.await();
            }
        });
        holding.await();
        CancellationSource stopLimit = new CancellationSource();
        TestKit.Forked<Void> stopper = stopTheWorldInLine(pool, stopLimit);
        CompletableFuture<Handle<Session>> acquired =
                pool.acquireAsync("y", CancellationToken.none()).toCompletableFuture();
        stopLimit.cancelAfter(Duration.ofMillis(50));
        try {
            acquired.get(5, TimeUnit.SECONDS).close();
            assertNotEquals("refpool-cancellation-timer", factoryRanOn.get(), "where the factory of 'y' ran");
        } finally {
            letGo.countDown();
            holder.join();
            stopper.join();
        }
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
    }
}
