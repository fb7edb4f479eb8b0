package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A thread that ends with an attachment open keeps its hold of the gate for ever: the pool cannot
 * take it back, but it names the thread ({@link PoolError.Kind#THREAD_ENDED_ATTACHED}) to whoever
 * then waits for the gate in vain (a close, a bounded close at its limit, a timed stop of the
 * world), once per thread; and the states it keeps to find such threads stay bounded.
 */
class ThreadEndedAttachedTest {
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    private RefPool<String, Object> pool(AttachMode mode) {
        return RefPool.builder((String key) -> new Object())
                .attachMode(mode)
                .name("ended")
                .errorListener(errors::add)
                .build();
    }

    /** Runs {@code work} on a thread named {@code name} and waits for it to end. */
    private static void runAndEnd(String name, Runnable work) throws InterruptedException {
        Thread thread = new Thread(work, name);
        thread.start();
        thread.join();
    }

    private List<PoolError> reported() {
        return errors.stream()
                .filter(e -> e.kind() == PoolError.Kind.THREAD_ENDED_ATTACHED)
                .toList();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aBoundedCloseNamesTheThreadItWaitsForOnce(AttachMode mode) throws Exception {
        RefPool<String, Object> pool = pool(mode);
        runAndEnd("dies-detached", () -> pool.attach().close());
        runAndEnd("dies-attached", pool::attach);

        assertFalse(pool.close(Duration.ofMillis(100)), "the dead thread's hold is never given back");
        assertFalse(pool.close(Duration.ofMillis(50)));

        List<PoolError> reported = reported();
        assertEquals(1, reported.size(), "once per thread, and only the one that ended attached: " + errors);
        String message = reported.get(0).message();
        assertTrue(message.contains("thread 'dies-attached' ended attached to pool 'ended'"), message);
    }

    @Test
    void threadsWithoutANameAreNamedByTheirIds() throws Exception {
        RefPool<String, Object> pool = pool(AttachMode.SHARED);
        Thread first = new Thread(pool::attach, ""); // as a virtual thread has no name
        Thread second = new Thread(pool::attach, "");
        for (Thread unnamed : List.of(first, second)) {
            unnamed.start();
            unnamed.join();
        }
        assertFalse(pool.close(Duration.ofMillis(100)));
        List<String> messages = reported().stream().map(PoolError::message).toList();
        assertEquals(2, messages.size(), errors.toString());
        for (Thread unnamed : List.of(first, second)) {
            assertTrue(
                    messages.stream().anyMatch(m -> m.contains("thread #" + unnamed.getId() + " ended attached")),
                    messages.toString());
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aTimedStopOfTheWorldThatTimesOutNamesTheThread(AttachMode mode) throws Exception {
        RefPool<String, Object> pool = pool(mode);
        runAndEnd("dies-attached-too", pool::attach);

        assertThrows(WaitTimeoutException.class, () -> pool.stopTheWorld(Duration.ofMillis(50))
                .close());

        assertEquals(1, reported().size(), errors.toString());
        assertTrue(
                reported().get(0).message().contains("'dies-attached-too'"),
                reported().toString());
        pool.close(Duration.ZERO);
    }

    @Test
    void aBurstOfThreadsThatEndedDetachedIsForgottenAtTheNextThreadsStart() throws Exception {
        RefPool<String, Object> pool = pool(AttachMode.SHARED);
        int burst = 300;
        CountDownLatch allIn = new CountDownLatch(burst);
        CountDownLatch leave = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < burst; i++) {
            Thread thread = new Thread(() -> pool.run("k", o -> {
                allIn.countDown();
                try {
                    assertTrue(leave.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }));
            thread.start();
            threads.add(thread);
        }
        assertTrue(allIn.await(30, TimeUnit.SECONDS)); // all alive at once: each sweep so far kept them
        leave.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertTrue(pool.core().knownThreads() >= burst, "nothing swept yet");
        pool.core().knownThreadsSweepIntervalForTests(Duration.ZERO); // as if a second had passed
        runAndEnd("after-the-burst", () -> pool.call("k", o -> o));
        int known = pool.core().knownThreads();
        assertTrue(known <= 2, "no thread of the burst is alive, yet the pool keeps the states of " + known);
        pool.close();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void threadsThatEndedDetachedAreForgotten(AttachMode mode) throws Exception {
        RefPool<String, Object> pool = pool(mode);
        for (int i = 0; i < 1_000; i++) {
            runAndEnd("short-lived-" + i, () -> pool.call("k", o -> o));
        }
        int known = pool.core().knownThreads();
        assertTrue(known <= 128, "at most twice the threads alive, and the first sweep's 64: " + known);
        pool.close();
        assertTrue(reported().isEmpty(), errors.toString());
    }

    /** Timed waits of every kind, each made on a {@code GLOBAL} pool whose gate a dead thread holds. */
    static Stream<Arguments> timedWaits() {
        return Stream.of(
                Arguments.of("attach", (Consumer<RefPool<String, Object>>)
                        pool -> pool.attach(Duration.ofMillis(50)).close()),
                Arguments.of("attach, zero limit", (Consumer<RefPool<String, Object>>)
                        pool -> pool.attach(Duration.ZERO).close()),
                Arguments.of("stopTheWorld, zero limit", (Consumer<RefPool<String, Object>>)
                        pool -> pool.stopTheWorld(Duration.ZERO).close()),
                Arguments.of("acquire", (Consumer<RefPool<String, Object>>)
                        pool -> pool.acquire("k", Duration.ofMillis(50)).close()),
                Arguments.of("call", (Consumer<RefPool<String, Object>>)
                        pool -> pool.call("k", Duration.ofMillis(50), o -> o)),
                Arguments.of("acquireAsync", (Consumer<RefPool<String, Object>>) pool ->
                        join(pool.acquireAsync("k", Duration.ofMillis(50)).toCompletableFuture())),
                Arguments.of("callAsync", (Consumer<RefPool<String, Object>>) pool ->
                        join(pool.callAsync("k", Duration.ofMillis(50), o -> o).toCompletableFuture())));
    }

    private static void join(CompletableFuture<?> stage) {
        try {
            stage.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new CompletionException(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("timedWaits")
    void aTimedWaitThatTimesOutNamesTheThread(String what, Consumer<RefPool<String, Object>> wait) throws Exception {
        RefPool<String, Object> pool = pool(AttachMode.GLOBAL);
        runAndEnd("dies-attached", pool::attach);

        assertThrows(WaitTimeoutException.class, () -> wait.accept(pool));

        assertEquals(1, reported().size(), errors.toString());
        pool.close(Duration.ZERO);
    }

    /**
     * The common fork-join pool's workers clear their thread-locals between tasks (JDK 19 on): a
     * worker that uses the pool after every idle spell has a new state each time, and the old ones,
     * of a thread that is still alive, are not kept. One that lost its state while attached (a task
     * that left its attachment open) is reported.
     */
    @Test
    @EnabledForJreRange(min = JRE.JAVA_21)
    void aWorkerWhoseThreadLocalsAreClearedLeavesNoStatesBehind() throws Exception {
        RefPool<String, Object> pool = pool(AttachMode.SHARED);
        Set<Thread> workers = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            AtomicReference<Thread> ran = new AtomicReference<>();
            CompletableFuture.runAsync(() -> {
                        ran.set(Thread.currentThread());
                        pool.call("k", o -> o);
                    })
                    .get(10, TimeUnit.SECONDS);
            workers.add(ran.get());
            TestKit.awaitParked(ran.get()); // idle: its thread-locals were cleared before it parked
        }
        int known = pool.core().knownThreads();
        assertTrue(known <= 64, "workers " + workers.size() + ", states kept " + known);

        AtomicReference<Thread> leaker = new AtomicReference<>();
        CompletableFuture.runAsync(() -> {
                    leaker.set(Thread.currentThread());
                    pool.attach(); // never closed: the task ends attached, its worker lives on
                })
                .get(10, TimeUnit.SECONDS);
        TestKit.awaitParked(leaker.get());
        java.util.concurrent.atomic.AtomicBoolean usedAgain = new java.util.concurrent.atomic.AtomicBoolean();
        for (int attempt = 0; attempt < 1_000 && !usedAgain.get(); attempt++) {
            // the worker's next use of the pool finds its state gone and makes another
            CompletableFuture.runAsync(() -> {
                        if (Thread.currentThread() == leaker.get()) {
                            pool.call("k", o -> o);
                            usedAgain.set(true);
                        }
                    })
                    .get(10, TimeUnit.SECONDS);
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(
                usedAgain.get(), "no task of the common pool landed on the worker");
        assertFalse(pool.close(Duration.ofMillis(100)), "the lost hold keeps the close waiting");
        List<PoolError> reported = reported();
        assertEquals(1, reported.size(), errors.toString());
        assertTrue(reported.get(0).message().contains("lost its attachment to pool 'ended'"), reported.toString());
    }

    /** An attachment a task left open, closed by a later task on the same worker after all: nothing is lost. */
    @Test
    @EnabledForJreRange(min = JRE.JAVA_21)
    void aLostAttachmentClosedOnItsThreadAfterAllIsNotReported() throws Exception {
        RefPool<String, Object> pool = pool(AttachMode.SHARED);
        AtomicReference<Attachment> left = new AtomicReference<>();
        AtomicReference<Thread> worker = new AtomicReference<>();
        CompletableFuture.runAsync(() -> {
                    worker.set(Thread.currentThread());
                    left.set(pool.attach()); // left open by its task
                })
                .get(10, TimeUnit.SECONDS);
        TestKit.awaitParked(worker.get()); // idle: its thread-locals were cleared
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        for (int attempt = 0; attempt < 1_000 && !closed.get(); attempt++) {
            CompletableFuture.runAsync(() -> {
                        if (Thread.currentThread() == worker.get()) {
                            pool.call("k", o -> o); // a new state replaces the attached one
                            left.get().close(); // and the old attachment is closed on its own thread
                            closed.set(true);
                        }
                    })
                    .get(10, TimeUnit.SECONDS);
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(closed.get(), "no task of the common pool landed on the worker");

        assertTrue(pool.close(Duration.ofSeconds(10)), "nothing holds the gate");
        assertTrue(reported().isEmpty(), errors.toString());
    }
}
