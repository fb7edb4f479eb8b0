package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Every wait of a call can be bounded, and so can close: {@code call(key, timeout, fn)},
 * {@code callAsync(key, timeout, fn)} and {@code close(timeout)}. A limit bounds waits, never a
 * running function: the pool never disposes an object under one. Each wait here is forced: the
 * resource is held by a thread parked on a latch until the test lets it go.
 */
class BoundedCallsAndCloseTest {
    private static final Duration SHORT = Duration.ofMillis(100);

    private final AtomicInteger disposed = new AtomicInteger();
    private final AtomicInteger created = new AtomicInteger();

    private RefPool<String, StringBuilder> pool(AttachMode mode) {
        return RefPool.newBuilder()
                .attachMode(mode)
                .disposer((StringBuilder value) -> disposed.incrementAndGet())
                .build(StringBuilder::new);
    }

    /** {@return a call of {@code key} parked inside its function until {@code release} opens}; it is inside */
    private static TestKit.Forked<Integer> parkedCall(
            RefPool<String, StringBuilder> pool, String key, CountDownLatch release) throws InterruptedException {
        CountDownLatch inside = new CountDownLatch(1);
        TestKit.Forked<Integer> call = parkedCall(pool, key, inside, release);
        assertTrue(inside.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        return call;
    }

    /** A call of {@code key} parked inside its function (holding the gate and, per mode, the section). */
    private static TestKit.Forked<Integer> parkedCall(
            RefPool<String, StringBuilder> pool, String key, CountDownLatch inside, CountDownLatch release) {
        return TestKit.fork(
                "parked call",
                () -> pool.call(key, value -> {
                    inside.countDown();
                    TestKeyedPoolFixtures.awaitLatch(release);
                    return 1;
                }));
    }

    @Test
    void aBoundedCloseReturnsFalseWhileACallRunsAndTheObjectIsDisposedOnlyAfterItReturns() throws Exception {
        RefPool<String, StringBuilder> pool = pool(AttachMode.PER_OBJECT);
        CountDownLatch release = new CountDownLatch(1);
        TestKit.Forked<Integer> running = parkedCall(pool, "a", release);

        assertFalse(pool.close(SHORT), "a call still runs: the close is not done");
        assertTrue(pool.isClosed(), "closed to newcomers at once");
        assertThrows(PoolClosedException.class, () -> pool.call("b", value -> 0));
        assertEquals(0, disposed.get(), "never disposed under a running function");

        release.countDown();
        assertEquals(1, running.join());
        assertTrue(pool.close(BOUND), "the close finished when the call left");
        await().atMost(BOUND).until(() -> disposed.get() == 1);
        assertThrows(IllegalArgumentException.class, () -> pool.close(Duration.ofMillis(-1)));
    }

    /** A pool whose call executor takes every task and never runs it, as a discard policy does. */
    private RefPool<String, StringBuilder> droppingTasks(AttachMode mode) {
        return RefPool.newBuilder()
                .attachMode(mode)
                .callExecutor(task -> {})
                .disposer((StringBuilder value) -> disposed.incrementAndGet())
                .build(key -> {
                    created.incrementAndGet();
                    return new StringBuilder(key);
                });
    }

    /**
     * The gate and the section of "a" were given back (a stop of the world and a call without
     * waiting get them), no function ran, and the close finds nothing held.
     */
    private void assertNothingHeld(RefPool<String, StringBuilder> pool, AtomicInteger ran) throws Exception {
        try (Attachment stop = pool.stopTheWorld(BOUND)) {
            int result = pool.call("a", Duration.ZERO, value -> 1);
            assertEquals(1, result, "and the section");
        }
        assertEquals(0, ran.get());
        assertTrue(pool.close(BOUND), "nothing holds the close");
        assertEquals(created.get(), disposed.get(), "each object disposed once");
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(AttachMode.class)
    void aCallAsyncItsCallerGivesUpGivesBackWhatItHeldEvenIfTheExecutorNeverRunsIt(AttachMode mode) throws Exception {
        RefPool<String, StringBuilder> pool = droppingTasks(mode);
        io.refpool.sync.CancellationSource caller = new io.refpool.sync.CancellationSource();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> byToken = pool.callAsync("a", caller.token(), value -> ran.incrementAndGet())
                .toCompletableFuture();
        CompletableFuture<Integer> byFuture = pool.callAsync(
                        "a", io.refpool.sync.CancellationToken.none(), value -> ran.incrementAndGet())
                .toCompletableFuture();
        assertFalse(byToken.isDone(), "every wait granted, the function handed to an executor that drops it");

        caller.cancel();
        assertThrows(
                java.util.concurrent.CancellationException.class,
                () -> byToken.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        if (mode == AttachMode.PER_OBJECT) {
            assertFalse(byFuture.isDone(), "the second call waited for the section, which the first gave back");
        }
        assertTrue(byFuture.cancel(false), "the caller gives up on the second");

        assertNothingHeld(pool, ran);
    }

    /**
     * The caller settles the future with a value of its own ({@code complete}, {@code
     * completeOnTimeout}) rather than a failure. Before, only a failure ended the call: the task an
     * executor dropped kept the gate, the section and the reference, and a plain close waited for
     * ever; a timed call's waits went on for nobody.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(AttachMode.class)
    void aCallAsyncItsCallerCompletesWithAValueGivesBackWhatItHeld(AttachMode mode) throws Exception {
        RefPool<String, StringBuilder> pool = droppingTasks(mode);
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> call = pool.callAsync(
                        "a", io.refpool.sync.CancellationToken.none(), value -> ran.incrementAndGet())
                .toCompletableFuture();
        CompletableFuture<Integer> timed =
                pool.callAsync("a", BOUND, value -> ran.incrementAndGet()).toCompletableFuture();
        assertFalse(call.isDone(), "every wait granted, the function handed to an executor that drops it");
        assertTrue(call.complete(-1), "the caller settles it with a fallback");
        assertTrue(timed.complete(-1), "and the timed one, wherever it waits");

        assertNothingHeld(pool, ran);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(AttachMode.class)
    void aBoundedCloseAtItsLimitFailsTheCallAsyncsTheExecutorNeverStarted(AttachMode mode) throws Exception {
        RefPool<String, StringBuilder> pool = droppingTasks(mode);
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> call = pool.callAsync(
                        "a", io.refpool.sync.CancellationToken.none(), value -> ran.incrementAndGet())
                .toCompletableFuture();
        assertFalse(call.isDone());

        pool.close(SHORT); // at its limit it takes back what the dropped task held

        ExecutionException failure =
                assertThrows(ExecutionException.class, () -> call.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(PoolClosedException.class, failure.getCause());
        assertTrue(pool.close(BOUND), "the close finishes");
        assertEquals(0, ran.get());
        assertEquals(1, disposed.get(), "the object disposed once");
    }

    @Test
    void aBoundedCallTimesOutWaitingForTheSectionAndHoldsNothing() throws Exception {
        try (RefPool<String, StringBuilder> pool = pool(AttachMode.PER_OBJECT)) {
            CountDownLatch release = new CountDownLatch(1);
            TestKit.Forked<Integer> holder = parkedCall(pool, "a", release);

            AtomicInteger ran = new AtomicInteger();
            WaitTimeoutException timedOut = assertThrows(
                    WaitTimeoutException.class, () -> pool.call("a", SHORT, value -> ran.incrementAndGet()));
            assertTrue(timedOut.getMessage().contains("'a'"), timedOut.getMessage());
            assertEquals(0, ran.get(), "the function never ran");
            int other = pool.call("b", SHORT, value -> 1);
            assertEquals(1, other, "another tenant is not held up");

            release.countDown();
            holder.join();
            int again = pool.call("a", BOUND, value -> 2);
            assertEquals(2, again, "the section was given back");
            assertEquals(0, pool.attached(() -> pool.stats().live()), "no reference kept by the timed-out call");
        }
    }

    @Test
    void aBoundedCallTimesOutWaitingForTheGlobalGate() throws Exception {
        try (RefPool<String, StringBuilder> pool = pool(AttachMode.GLOBAL)) {
            CountDownLatch release = new CountDownLatch(1);
            TestKit.Forked<Integer> holder = parkedCall(pool, "a", release);

            assertThrows(WaitTimeoutException.class, () -> pool.run("b", SHORT, value -> value.append('x')));

            release.countDown();
            holder.join();
            pool.run("b", BOUND, value -> value.append('x'));
        }
    }

    @Test
    void aDefaultWaitBoundsTheWaitsOfFormsGivenNoLimit() throws Exception {
        try (RefPool<String, StringBuilder> perObject =
                        RefPool.newBuilder().defaultWait(SHORT).build(StringBuilder::new);
                RefPool<String, StringBuilder> global = RefPool.newBuilder()
                        .attachMode(AttachMode.GLOBAL)
                        .defaultWait(SHORT)
                        .build(StringBuilder::new)) {
            CountDownLatch inside = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            TestKit.Forked<Integer> inSection = parkedCall(perObject, "a", inside, release);
            TestKit.Forked<Integer> atGate = parkedCall(global, "a", inside, release);
            assertTrue(inside.await(BOUND.toSeconds(), TimeUnit.SECONDS));

            assertThrows(WaitTimeoutException.class, () -> perObject.call("a", value -> 0), "the section");
            try (Handle<StringBuilder> handle = perObject.attached(() -> perObject.acquire("a"))) {
                assertThrows(
                        WaitTimeoutException.class,
                        () -> perObject.attached(() -> handle.section()),
                        "Handle.section()");
                assertThrows(WaitTimeoutException.class, () -> handle.call(value -> 0), "Handle.call");
                perObject.runAttached(handle::close);
            }
            assertThrows(WaitTimeoutException.class, global::attach, "the gate");
            assertThrows(WaitTimeoutException.class, () -> global.run("b", value -> value.append('x')), "a call");

            release.countDown();
            inSection.join();
            atGate.join();
            int free = perObject.call("a", value -> 3);
            assertEquals(3, free, "granted at once when free");
        }
        assertThrows(IllegalArgumentException.class, () -> RefPool.newBuilder().defaultWait(Duration.ZERO));
    }

    @Test
    void aBoundedCallAsyncFailsItsStageWithATimeoutAndRunsNothing() throws Exception {
        try (RefPool<String, StringBuilder> pool = pool(AttachMode.PER_OBJECT)) {
            CountDownLatch release = new CountDownLatch(1);
            TestKit.Forked<Integer> holder = parkedCall(pool, "a", release);

            AtomicInteger ran = new AtomicInteger();
            CompletableFuture<Integer> timed =
                    pool.callAsync("a", SHORT, value -> ran.incrementAndGet()).toCompletableFuture();
            Throwable failure = timed.handle((value, thrown) -> thrown).get(BOUND.toSeconds(), TimeUnit.SECONDS);
            assertInstanceOf(
                    WaitTimeoutException.class,
                    failure instanceof CompletionException ? failure.getCause() : failure,
                    "the stage failed with the timeout itself");

            release.countDown();
            holder.join();
            assertEquals(0, ran.get(), "the function never ran");
            assertEquals(
                    7,
                    pool.callAsync("a", BOUND, value -> 7)
                            .toCompletableFuture()
                            .get(BOUND.toSeconds(), TimeUnit.SECONDS));
            ExecutionException negative =
                    assertThrows(ExecutionException.class, () -> pool.callAsync("a", Duration.ofMillis(-1), value -> 0)
                            .toCompletableFuture()
                            .get(BOUND.toSeconds(), TimeUnit.SECONDS));
            assertInstanceOf(IllegalArgumentException.class, negative.getCause());
        }
    }

    /**
     * Without an interrupter a limit ends where the function starts. The function here throws a
     * {@code CancellationException} of its own after the limit has passed; it reaches the caller as
     * it is, not as a timeout. The limit's passing is observed, not slept for: the pool's timers run
     * on one thread in deadline order, so a probe armed with the same delay after the function
     * started fires only after the call's own timer was due.
     */
    @Test
    void aBoundedCallAsyncWithoutAnInterrupterLetsAStartedFunctionFailAsItChooses() throws Exception {
        try (RefPool<String, StringBuilder> pool = pool(AttachMode.PER_OBJECT)) {
            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch limitPassed = new CountDownLatch(1);
            CompletableFuture<Integer> call = pool.<Integer>callAsync("a", SHORT, value -> {
                        inside.countDown();
                        TestKeyedPoolFixtures.awaitLatch(limitPassed);
                        throw new CancellationException("the function's own");
                    })
                    .toCompletableFuture();
            assertTrue(inside.await(BOUND.toSeconds(), TimeUnit.SECONDS));
            try (CancellationSource probe = new CancellationSource()) {
                probe.token().register(limitPassed::countDown);
                probe.cancelAfter(SHORT);
                assertTrue(limitPassed.await(BOUND.toSeconds(), TimeUnit.SECONDS));
            }
            Throwable failure = call.handle((value, thrown) -> thrown).get(BOUND.toSeconds(), TimeUnit.SECONDS);
            Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
            assertInstanceOf(CancellationException.class, cause, "the function's own failure");
            assertEquals("the function's own", cause.getMessage());
        }
    }

    /** A caller that cancels a timed callAsync while it waits ends it; that is no timeout. */
    @Test
    void aBoundedCallAsyncItsCallerCancelsIsNoTimeout() throws Exception {
        try (RefPool<String, StringBuilder> pool = pool(AttachMode.PER_OBJECT)) {
            CountDownLatch release = new CountDownLatch(1);
            TestKit.Forked<Integer> holder = parkedCall(pool, "a", release);

            AtomicInteger ran = new AtomicInteger();
            CompletableFuture<Integer> waiting = pool.callAsync(
                            "a", Duration.ofMinutes(1), value -> ran.incrementAndGet())
                    .toCompletableFuture();
            assertTrue(waiting.cancel(false));
            release.countDown();
            holder.join();
            assertEquals(0, pool.stats().timeouts(), "the caller's cancel is no timeout");
            assertEquals(0, ran.get());
        }
    }
}
