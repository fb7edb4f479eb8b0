package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The interrupter: called at most once, while the function still runs, when a call's time limit
 * passes, its token is cancelled, or a bounded close reaches its limit; never once the pool saw the
 * function return. The function sees its engine's own failure, and an object the interrupter
 * retires is disposed only after every holder let go.
 */
class InterrupterTest {
    private static final long BOUND_SECONDS = 10;

    /** An engine running a script that only its own stop ends, as GraalJS's interrupt does. */
    static final class Engine {
        final String key;
        private final CountDownLatch stopped = new CountDownLatch(1);
        final CountDownLatch running = new CountDownLatch(1);

        Engine(String key) {
            this.key = key;
        }

        void stop() {
            stopped.countDown();
        }

        /** Runs "forever": until {@link #stop()}, then fails as the engine does. */
        String runaway() throws InterruptedException {
            running.countDown();
            if (!stopped.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("never stopped");
            }
            throw new EngineStopped(key);
        }
    }

    static final class EngineStopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        EngineStopped(String key) {
            super("the script of " + key + " was stopped");
        }
    }

    private final Map<Engine, DisposalCause> disposed = new ConcurrentHashMap<>();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final AtomicInteger interrupts = new AtomicInteger();
    private final AtomicReference<Thread> interruptedOn = new AtomicReference<>();

    private RefPool<String, Engine> pool(Interrupter.Outcome outcome) {
        return pool((key, engine) -> {
            interrupts.incrementAndGet();
            interruptedOn.set(Thread.currentThread());
            assertFalse(disposed.containsKey(engine), "never disposed under a running function");
            engine.stop();
            return outcome;
        });
    }

    private RefPool<String, Engine> pool(Interrupter<String, Engine> interrupter) {
        return RefPool.newBuilder()
                .drainDelay(Duration.ofHours(1))
                .idle(cache -> cache.maximumSize(10))
                .errorListener(errors::add)
                .interrupter(interrupter)
                .disposer((String key, Engine engine, DisposalCause cause) -> {
                    if (disposed.put(engine, cause) != null) {
                        throw new AssertionError("disposed twice: " + engine);
                    }
                })
                .build(Engine::new);
    }

    /** Returns once {@code span} has passed on the clock: the call's limit, shorter, has run out. */
    private static void outlast(Duration span) {
        long end = System.nanoTime() + span.toNanos();
        while (System.nanoTime() - end < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    /** {@return what {@code call}, run on a new thread, threw once it ends}, or {@code null} if it returned */
    private static CompletableFuture<Throwable> onNewThread(java.util.concurrent.Callable<?> call) {
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        new Thread(() -> {
                    try {
                        call.call();
                        ended.complete(null);
                    } catch (Throwable t) {
                        ended.complete(t);
                    }
                })
                .start();
        return ended;
    }

    @Test
    void aLimitUsedUpBeforeTheFunctionStartsFailsTheCallWithoutRunningIt() throws Exception {
        // the enter hook runs after the section is taken and before the function: outlasting the
        // limit there leaves nothing for the function, which must not start unbounded
        CountDownLatch leaves = new CountDownLatch(1);
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .interrupter((String key, Engine engine) -> {
                    interrupts.incrementAndGet();
                    engine.stop();
                    return Interrupter.Outcome.KEEP;
                })
                .sectionHooks(SectionHooks.of(
                        (String key, Engine engine) -> outlast(Duration.ofMillis(50)), // the 5 ms limit is gone
                        (key, engine) -> leaves.countDown()))
                .build(Engine::new);
        AtomicInteger started = new AtomicInteger();

        io.refpool.sync.WaitTimeoutException timedOut = assertThrows(
                io.refpool.sync.WaitTimeoutException.class,
                () -> pool.call("k", Duration.ofMillis(5), engine -> started.incrementAndGet()));

        assertEquals(0, started.get(), "the function never started");
        assertEquals(0, interrupts.get(), "nothing ran for the interrupter to stop");
        assertTrue(timedOut.getMessage().contains("function on key"), timedOut::getMessage);
        assertEquals(Duration.ofMillis(5), timedOut.timeout());
        assertTrue(leaves.await(BOUND_SECONDS, TimeUnit.SECONDS), "the leave hook ran");
        assertEquals(1L, pool.stats().timeouts(), "counted as a timeout");
        int after = pool.call("k", engine -> started.incrementAndGet());
        assertEquals(1, after, "the section is free again");
        pool.close();
    }

    /**
     * Every {@code cancelAfter} of the JVM shares one timer thread: an interrupter that does not
     * return (an engine stopping a script in rounds, here one held on a latch) must not hold it, or
     * every other limit and timed wait of every pool would wait too.
     */
    @Test
    void anInterrupterThatTakesLongDelaysNoOtherTimer() throws Exception {
        CountDownLatch interrupting = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        RefPool<String, Engine> pool = pool((key, engine) -> {
            interrupting.countDown();
            assertTrue(mayReturn.await(BOUND_SECONDS, TimeUnit.SECONDS));
            engine.stop();
            return Interrupter.Outcome.RETIRE;
        });
        Engine engine = pool.call("k", e -> e);
        CompletableFuture<Throwable> caller = onNewThread(() -> pool.call("k", Duration.ofMillis(20), Engine::runaway));
        assertTrue(interrupting.await(BOUND_SECONDS, TimeUnit.SECONDS), "the limit passed: the interrupter runs");

        CountDownLatch otherTimerFired = new CountDownLatch(1);
        try (CancellationSource other = new CancellationSource()) {
            other.token().register(otherTimerFired::countDown);
            other.cancelAfter(Duration.ofMillis(1));
            assertTrue(
                    otherTimerFired.await(BOUND_SECONDS, TimeUnit.SECONDS),
                    "another timer fired while the interrupter still ran");
        }
        assertFalse(caller.isDone(), "the call waits for its interrupter");
        mayReturn.countDown();
        assertTrue(caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof EngineStopped);
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)));
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(engine));
    }

    @Test
    void aTimeLimitPassedWhileTheFunctionRunsInterruptsItOnceOnAThreadOfThePool() {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        Engine engine = pool.call("k", e -> e);

        EngineStopped failure =
                assertThrows(EngineStopped.class, () -> pool.call("k", Duration.ofMillis(20), Engine::runaway));

        assertTrue(failure.getMessage().contains("k"), "the call fails with the engine's own failure");
        assertEquals(1, interrupts.get());
        assertNotSame(Thread.currentThread(), interruptedOn.get(), "not on the calling thread");
        assertTrue(interruptedOn.get().getName().startsWith("refpool-interrupter-"), interruptedOn.get()::getName);
        assertSame(engine, pool.call("k", e -> e), "KEEP: the next call gets the same object");
        assertTrue(disposed.isEmpty());
        assertTrue(errors.isEmpty(), () -> "" + errors);
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(engine));
    }

    @Test
    void aRunOfTheSameLimitIsInterruptedToo() {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        assertThrows(EngineStopped.class, () -> pool.run("k", Duration.ofMillis(20), Engine::runaway));
        assertEquals(1, interrupts.get());
        pool.close();
    }

    @Test
    void aFunctionThatReturnedIsNeverInterruptedEvenIfTheTokenIsCancelledBeforeTheCallEnds() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestPoolHooks.Pause returned = hooks.pause(Point.FUNCTION_RETURNED, null);
        CancellationSource source = new CancellationSource();

        CompletableFuture<String> call =
                pool.callAsync("k", source.token(), e -> "done").toCompletableFuture();
        returned.awaitArrival(); // the function returned; the call still holds everything
        source.cancel(); // the cancel comes after the return
        returned.proceed();

        assertEquals("done", call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        assertEquals(0, interrupts.get(), "never after the function returned");
        Engine engine = pool.call("k", e -> e);
        assertNull(disposed.get(engine));
        pool.close();
    }

    @Test
    void aCallWhoseInterrupterStillRunsKeepsItsObjectAndSectionUntilItReturns() throws Exception {
        CountDownLatch mayReturn = new CountDownLatch(1);
        RefPool<String, Engine> pool = pool((key, engine) -> {
            interrupts.incrementAndGet();
            engine.stop();
            assertTrue(mayReturn.await(BOUND_SECONDS, TimeUnit.SECONDS));
            return Interrupter.Outcome.KEEP;
        });
        Engine engine = pool.call("k", e -> e);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestPoolHooks.Pause returned = hooks.pause(Point.FUNCTION_RETURNED, null);
        CancellationSource source = new CancellationSource();
        CompletableFuture<String> call =
                pool.callAsync("k", source.token(), Engine::runaway).toCompletableFuture();
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));
        Thread canceller = new Thread(source::cancel); // runs the interrupter, which waits for mayReturn
        canceller.start();
        returned.awaitArrival(); // the function threw the engine's failure
        returned.proceed();

        assertThrows(
                java.util.concurrent.TimeoutException.class,
                () -> call.get(200, TimeUnit.MILLISECONDS),
                "the call waits for its interrupter");
        try (Attachment attached = pool.attach();
                Handle<Engine> handle = pool.acquire("k")) {
            assertThrows(
                    io.refpool.sync.WaitTimeoutException.class,
                    () -> handle.section(Duration.ZERO),
                    "its section is still held");
        }
        mayReturn.countDown();
        ExecutionException failure =
                assertThrows(ExecutionException.class, () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        assertTrue(failure.getCause() instanceof EngineStopped);
        canceller.join();
        assertEquals(1, interrupts.get());
        pool.close();
    }

    @Test
    void aTokenCancelledWhileTheFunctionRunsInterruptsItOnTheCancellingThread() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        Engine engine = pool.call("k", e -> e);
        CancellationSource source = new CancellationSource();

        CompletableFuture<String> call =
                pool.callAsync("k", source.token(), Engine::runaway).toCompletableFuture();
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));
        source.cancel();

        ExecutionException failure =
                assertThrows(ExecutionException.class, () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        assertTrue(failure.getCause() instanceof EngineStopped, () -> "the engine's failure: " + failure.getCause());
        assertEquals(1, interrupts.get());
        assertSame(Thread.currentThread(), interruptedOn.get(), "on the cancelling thread");
        source.cancel();
        assertEquals(1, interrupts.get(), "once");
        pool.close();
    }

    @Test
    void aCallAsyncTimeLimitInterruptsItsFunction() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        CompletableFuture<String> call =
                pool.callAsync("k", Duration.ofMillis(20), Engine::runaway).toCompletableFuture();
        ExecutionException failure =
                assertThrows(ExecutionException.class, () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        assertTrue(failure.getCause() instanceof EngineStopped, () -> "the engine's failure: " + failure.getCause());
        assertEquals(1, interrupts.get());
        pool.close();
    }

    @Test
    void aCallAsyncFunctionInterruptedAtItsLimitFailsWithItsOwnCancellationException() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        CancellationException own = new CancellationException("the engine reports its stop as a cancellation");
        // a limit the function starts well within: it then runs until the interrupter stops it
        CompletableFuture<String> call = pool.callAsync("k", Duration.ofSeconds(2), engine -> {
                    try {
                        return engine.runaway();
                    } catch (EngineStopped stopped) {
                        throw own;
                    }
                })
                .toCompletableFuture();
        Throwable failure = call.handle((value, thrown) -> thrown).get(BOUND_SECONDS, TimeUnit.SECONDS);
        assertSame(own, failure, "the function's own outcome, not the limit's");
        assertEquals(1, interrupts.get());
        assertEquals(0, pool.stats().timeouts(), "no wait timed out");
        pool.close();
    }

    /**
     * A caller that settles the stage of a timed {@code callAsync} itself, with a fallback as
     * {@code completeOnTimeout} gives, ends the call's waits as the token form does: the running
     * function is not interrupted for it (here the interrupter would retire a healthy object).
     */
    @Test
    void aCallerSettlingATimedCallAsyncDoesNotInterruptItsFunction() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        Engine engine = pool.call("k", value -> value);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        CompletableFuture<String> call = pool.callAsync("k", Duration.ofSeconds(BOUND_SECONDS), value -> {
                    running.countDown();
                    assertTrue(mayReturn.await(BOUND_SECONDS, TimeUnit.SECONDS));
                    return "late";
                })
                .toCompletableFuture();
        assertTrue(running.await(BOUND_SECONDS, TimeUnit.SECONDS));
        assertTrue(call.complete("fallback"));
        assertEquals(0, interrupts.get(), "interrupted on " + interruptedOn.get());
        mayReturn.countDown();
        pool.flush();
        assertSame(engine, pool.call("k", value -> value), "kept: no limit passed");
        assertFalse(disposed.containsKey(engine));
        pool.close();
    }

    /** The function of such a call still has its limit: a runaway is interrupted when it passes. */
    @Test
    void aFunctionWhoseCallerSettledTheStageIsStillInterruptedAtItsLimit() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        Engine engine = pool.call("k", value -> value);
        CompletableFuture<String> call =
                pool.callAsync("k", Duration.ofSeconds(1), Engine::runaway).toCompletableFuture();
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));
        assertTrue(call.complete("fallback"));
        Awaitility.await("the interrupter at the limit")
                .atMost(BOUND_SECONDS, TimeUnit.SECONDS)
                .until(() -> interrupts.get() == 1);
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(engine));
    }

    /**
     * The caller settles the stage while the run is past its last look at the stage and in its
     * section's enter hook: the function, about to start, either does not run or keeps its limit.
     * Before, the settle disarmed the limit of a function that then started unbounded.
     */
    @Test
    void aCallerSettlingAsTheFunctionStartsLeavesNoFunctionWithoutItsLimit() throws Exception {
        CountDownLatch inEnter = new CountDownLatch(1);
        CountDownLatch mayEnter = new CountDownLatch(1);
        AtomicInteger holdEnter = new AtomicInteger();
        AtomicInteger started = new AtomicInteger();
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .attachMode(AttachMode.PER_OBJECT)
                .idle(cache -> cache.maximumSize(10))
                .interrupter((String key, Engine engine) -> {
                    interrupts.incrementAndGet();
                    engine.stop();
                    return Interrupter.Outcome.KEEP;
                })
                .sectionHooks(SectionHooks.of(
                        (String key, Engine engine) -> {
                            if (holdEnter.getAndSet(0) == 1) {
                                inEnter.countDown();
                                TestKeyedPoolFixtures.awaitLatch(mayEnter);
                            }
                        },
                        (key, engine) -> {}))
                .build(Engine::new);
        Engine engine = pool.call("k", value -> value);
        holdEnter.set(1);
        CompletableFuture<String> call = pool.callAsync("k", Duration.ofSeconds(1), value -> {
                    started.incrementAndGet();
                    return value.runaway();
                })
                .toCompletableFuture();
        assertTrue(inEnter.await(BOUND_SECONDS, TimeUnit.SECONDS));
        assertTrue(call.complete("fallback"));
        mayEnter.countDown();
        pool.close(); // waits for a function that runs: it ends only by its limit's interrupter
        assertEquals(started.get(), interrupts.get(), "a function that started was interrupted at its limit");
        assertEquals(started.get(), 1 - engine.running.getCount());
    }

    @Test
    void aRetiredObjectIsDisposedAfterTheCallAndItsOtherHolderLetGo() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        Handle<Engine> holder = pool.attached(() -> pool.acquire("k"));
        Engine engine = holder.get();

        assertThrows(EngineStopped.class, () -> pool.call("k", Duration.ofMillis(20), Engine::runaway));

        assertEquals(1, interrupts.get());
        Engine fresh = pool.call("k", e -> e);
        assertNotSame(engine, fresh, "the next call gets a new object");
        assertSame(engine, holder.get(), "the other holder keeps its object");
        assertFalse(disposed.containsKey(engine), "not while a holder has it");
        pool.runAttached(holder::close);
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(engine));
        assertEquals(1, pool.stats().disposals(DisposalCause.INTERRUPTED));
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(fresh));
    }

    @Test
    void aRetiredObjectNobodyElseHoldsIsDisposedWhenTheCallReturns() {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        Engine engine = pool.call("k", e -> e);

        assertThrows(EngineStopped.class, () -> pool.call("k", Duration.ofMillis(20), Engine::runaway));

        assertEquals(DisposalCause.INTERRUPTED, disposed.get(engine), "at once, no flush needed");
        pool.close();
    }

    @Test
    void aThrowingInterrupterIsReportedAndItsObjectRetired() {
        RefPool<String, Engine> pool = pool((key, engine) -> {
            interrupts.incrementAndGet();
            engine.stop();
            throw new IllegalStateException("interrupter broke");
        });
        Engine engine = pool.call("k", e -> e);

        assertThrows(EngineStopped.class, () -> pool.call("k", Duration.ofMillis(20), Engine::runaway));

        assertEquals(1, interrupts.get());
        assertEquals(1, errors.size(), () -> "" + errors);
        assertEquals(PoolError.Kind.INTERRUPTER_FAILED, errors.get(0).kind());
        assertEquals("interrupter broke", errors.get(0).cause().getMessage());
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(engine));
        assertNotSame(engine, pool.call("k", e -> e));
        pool.close();
        assertEquals(2, disposed.size(), "each object disposed once");
    }

    @Test
    void aBoundedCloseInterruptsTheCallsStillRunningAtItsLimit() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        Engine engine = pool.call("k", e -> e);
        CompletableFuture<Throwable> caller = onNewThread(() -> pool.call("k", Engine::runaway)); // no limit of its own
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));

        pool.close(Duration.ofMillis(20));

        assertEquals(1, interrupts.get());
        assertSame(Thread.currentThread(), interruptedOn.get(), "on the closing thread");
        assertTrue(caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof EngineStopped);
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)), "the close finishes once the call left");
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(engine));
    }

    /** An interrupter that throws InterruptedException: the object retires, and the closing thread's interrupt is set again. */
    @Test
    void anInterrupterInterruptedRetiresTheObjectAndKeepsTheInterrupt() throws Exception {
        RefPool<String, Engine> pool = pool((key, engine) -> {
            interrupts.incrementAndGet();
            engine.stop();
            throw new InterruptedException("interrupter interrupted");
        });
        Engine engine = pool.call("k", e -> e);
        CompletableFuture<Throwable> caller = onNewThread(() -> pool.call("k", Engine::runaway));
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));

        pool.close(Duration.ofMillis(20));

        assertTrue(Thread.interrupted(), "the interrupt the interrupter took is set again on the closing thread");
        assertEquals(1, interrupts.get());
        assertTrue(caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof EngineStopped);
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)), "the close finishes once the call left");
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(engine), "a failed interrupter retires the object");
        assertEquals(PoolError.Kind.INTERRUPTER_FAILED, errors.get(0).kind());
    }

    @Test
    void aCallerInterruptedByTheInterrupterWaitsForItToReturnAndKeepsTheInterrupt() throws Exception {
        CountDownLatch mayReturn = new CountDownLatch(1);
        AtomicReference<Thread> caller = new AtomicReference<>();
        RefPool<String, Engine> pool = pool((key, engine) -> {
            interrupts.incrementAndGet();
            engine.stop();
            caller.get().interrupt(); // as a host whose engine runs Java code stops it
            assertTrue(mayReturn.await(BOUND_SECONDS, TimeUnit.SECONDS));
            return Interrupter.Outcome.KEEP;
        });
        Engine engine = pool.call("k", e -> e);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestPoolHooks.Pause returned = hooks.pause(Point.FUNCTION_RETURNED, null);
        CompletableFuture<Boolean> interruptedAfter = new CompletableFuture<>();
        Thread calling = new Thread(() -> {
            try {
                pool.call("k", e -> {
                    e.running.countDown();
                    while (e.stopped.getCount() > 0 || !Thread.currentThread().isInterrupted()) {
                        Thread.onSpinWait(); // ignores the interrupt: the flag stays set
                    }
                    throw new EngineStopped(e.key);
                });
                interruptedAfter.completeExceptionally(new AssertionError("the call returned"));
            } catch (EngineStopped expected) {
                interruptedAfter.complete(Thread.currentThread().isInterrupted());
            } catch (Throwable t) {
                interruptedAfter.completeExceptionally(t);
            }
        });
        caller.set(calling);
        calling.start();
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));
        Thread closer = new Thread(() -> pool.close(Duration.ofMillis(1))); // runs the interrupter
        closer.start();
        returned.awaitArrival(); // the function threw, its thread interrupted, the interrupter still running
        returned.proceed();

        assertThrows(
                java.util.concurrent.TimeoutException.class,
                () -> interruptedAfter.get(200, TimeUnit.MILLISECONDS),
                "the caller waits for its interrupter, interrupted or not");
        mayReturn.countDown();
        assertTrue(
                interruptedAfter.get(BOUND_SECONDS, TimeUnit.SECONDS), "the interrupt is still set when the call ends");
        closer.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
        assertFalse(closer.isAlive());
        assertEquals(1, interrupts.get());
    }

    /** {@return a pause of the next call at {@code FUNCTION_STARTING}: registered, its function not started} */
    private static TestPoolHooks.Pause pausedAtFunctionStart(RefPool<String, Engine> pool) {
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        return hooks.pause(Point.FUNCTION_STARTING, null);
    }

    @Test
    void aTokenCancelledBeforeTheFunctionStartsFailsTheCallWithoutTheInterrupterOrTheFunction() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        Engine engine = pool.call("k", e -> e);
        TestPoolHooks.Pause starting = pausedAtFunctionStart(pool);
        CancellationSource source = new CancellationSource();
        AtomicInteger ran = new AtomicInteger();

        CompletableFuture<String> call = pool.callAsync("k", source.token(), e -> {
                    ran.incrementAndGet();
                    return "ran";
                })
                .toCompletableFuture();
        starting.awaitArrival(); // registered with the token, the function not started
        source.cancel(); // runs the run's callback here, at once
        starting.proceed();

        assertThrows(
                java.util.concurrent.CancellationException.class,
                () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS),
                "the call fails as cancelled");
        assertEquals(0, ran.get(), "the function never started");
        assertEquals(0, interrupts.get(), "nothing to interrupt");
        pool.core().setHooks(null);
        assertSame(engine, pool.call("k", e -> e), "the object was not retired");
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(engine));
    }

    @Test
    void aBoundedCloseReachingItsLimitBeforeTheFunctionStartsFailsTheCallWithoutTheInterrupter() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.RETIRE);
        Engine engine = pool.call("k", e -> e);
        TestPoolHooks.Pause starting = pausedAtFunctionStart(pool);
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Throwable> caller = onNewThread(() -> pool.call("k", e -> ran.incrementAndGet()));
        starting.awaitArrival();

        assertFalse(pool.close(Duration.ofMillis(20)), "the call still holds its object at the limit");
        starting.proceed();

        assertTrue(
                caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof PoolClosedException,
                () -> "the call fails as the pool closed");
        assertEquals(0, ran.get(), "the function never started");
        assertEquals(0, interrupts.get(), "nothing to interrupt");
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)), "the close finishes once the call left");
        assertEquals(DisposalCause.CLOSED, disposed.get(engine));
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(AttachMode.class)
    void aBoundedCloseInterruptsAHandlesCallStillRunningAtItsLimit(AttachMode mode) throws Exception {
        RefPool<String, Engine> pool = RefPool.newBuilder()
                .attachMode(mode)
                .interrupter((String key, Engine engine) -> {
                    interrupts.incrementAndGet();
                    engine.stop();
                    return Interrupter.Outcome.RETIRE;
                })
                .disposer((String key, Engine engine, DisposalCause cause) -> disposed.put(engine, cause))
                .build(Engine::new);
        Handle<Engine> handle = pool.attached(() -> pool.acquire("k"));
        Engine engine = handle.call(e -> e);
        CompletableFuture<Throwable> caller = onNewThread(() -> handle.call(Engine::runaway));
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));

        pool.close(Duration.ofMillis(20));

        assertEquals(1, interrupts.get(), "as a pool.call is");
        assertTrue(caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof EngineStopped);
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)), "the close finishes once the call left");
        assertNull(disposed.get(engine), "the handle still holds it");
        handle.close(); // on no attached thread: the drainer applies it
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(BOUND_SECONDS))
                .until(() -> disposed.get(engine) == DisposalCause.INTERRUPTED);
    }

    @Test
    void aBoundedCloseInterruptsARunningTwoKeyCallGivingEachObjectOnceAtItsLimit() throws Exception {
        List<String> interruptedKeys = new CopyOnWriteArrayList<>();
        RefPool<String, Engine> pool = pool((key, engine) -> {
            interruptedKeys.add(key);
            engine.stop();
            return Interrupter.Outcome.RETIRE;
        });
        Engine a = pool.call("a", e -> e);
        Engine b = pool.call("b", e -> e);
        CompletableFuture<Throwable> caller =
                onNewThread(() -> pool.call("b", "a", (first, second) -> first.runaway() + second.runaway()));
        assertTrue(b.running.await(BOUND_SECONDS, TimeUnit.SECONDS));

        pool.close(Duration.ofMillis(20));

        assertEquals(List.of("b", "a"), interruptedKeys, "each object once, the first key's first");
        assertTrue(caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof EngineStopped);
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)), "the close finishes once the call left");
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(a));
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(b));
        assertTrue(errors.isEmpty(), () -> "" + errors);
    }

    @Test
    void aTwoKeyCallNamingOneKeyTwiceGivesItsObjectOnce() throws Exception {
        RefPool<String, Engine> pool = pool(Interrupter.Outcome.KEEP);
        Engine engine = pool.call("k", e -> e);
        CompletableFuture<Throwable> caller =
                onNewThread(() -> pool.call("k", "k", (first, second) -> first.runaway()));
        assertTrue(engine.running.await(BOUND_SECONDS, TimeUnit.SECONDS));

        pool.close(Duration.ofMillis(20));

        assertTrue(caller.get(BOUND_SECONDS, TimeUnit.SECONDS) instanceof EngineStopped);
        assertEquals(1, interrupts.get());
        assertTrue(pool.close(Duration.ofSeconds(BOUND_SECONDS)));
        assertEquals(DisposalCause.CLOSED, disposed.get(engine), "KEEP");
    }

    @Test
    void withoutAnInterrupterTheLimitBoundsOnlyTheWaits() throws Exception {
        RefPool<String, Engine> pool = RefPool.newBuilder().build(Engine::new);
        String out = pool.call("k", Duration.ofMillis(1), e -> {
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            while (System.nanoTime() < end) { // the limit passes while the function runs
                Thread.sleep(1);
            }
            return "ran to its end";
        });
        assertEquals("ran to its end", out);
        pool.close();
    }

    @Test
    void aTimedCallOnAnUnattachedThreadReleasesItsObjectBeforeItReturns() {
        RefPool<String, Engine> pool =
                RefPool.newBuilder().drainDelay(Duration.ofHours(1)).build(Engine::new);
        assertFalse(pool.isAttached());

        pool.call("k", Duration.ofSeconds(BOUND_SECONDS), e -> e);

        PoolStats stats = pool.stats();
        assertEquals(0, stats.live(), () -> "" + stats);
        assertEquals(0, stats.pendingDecrements(), () -> "" + stats);
        assertEquals(1, stats.disposals(DisposalCause.RELEASED), () -> "" + stats);
        pool.close();
    }
}
