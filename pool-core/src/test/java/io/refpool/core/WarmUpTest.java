package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.joinedFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code pool.warmUp(keys, token)}: keys without an object are created and left idle, on the pool's
 * executor; existing keys are skipped; only free capacity is used; a cancelled token stops it; a
 * close during a warm-up's factory disposes the object once and fails the stage.
 */
class WarmUpTest {
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private final Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();
    private final AtomicInteger created = new AtomicInteger();
    private final List<PoolError> errors = new ArrayList<>();

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    private RefPool.Builder<String, Object> builder() {
        return RefPool.newBuilder()
                .executor(executor)
                .idle(cache -> cache.maximumSize(100))
                .errorListener(errors::add)
                .disposer((String key, Object value, DisposalCause cause) -> {
                    if (disposed.put(value, cause) != null) {
                        throw new AssertionError("disposed twice: " + value);
                    }
                });
    }

    private RefPool<String, Object> pool(RefPool.Builder<String, Object> builder) {
        return builder.build(key -> {
            created.incrementAndGet();
            return key + "#" + created.get();
        });
    }

    private static int warm(RefPool<String, Object> pool, CancellationToken token, String... keys) throws Exception {
        return pool.warmUp(Arrays.asList(keys), token).toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void keysWithoutAnObjectAreCreatedAndLeftIdle() throws Exception {
        RefPool<String, Object> pool = pool(builder());
        Handle<Object> live = pool.attached(() -> pool.acquire("a"));
        assertEquals(2, warm(pool, CancellationToken.none(), "a", "b", "c", "b"), "a is live, b twice");
        assertEquals(3, created.get());
        assertEquals(2, pool.stats().idle());
        assertEquals(1, pool.stats().live());
        assertSame(pool.call("b", value -> value), pool.call("b", value -> value));
        assertEquals(3, created.get(), "acquires of a warmed key revive it");
        assertEquals(0, warm(pool, CancellationToken.none(), "b", "c"), "warm already");
        pool.runAttached(live::close);
        pool.close();
        assertEquals(3, disposed.size());
    }

    /**
     * A warm-up publishes its object, then gives back its reference, and only then completes its
     * creation. A close between the two waits for it: before, it found no creation in the slot and
     * went on, reported the warm-up's reference as an open handle, and returned with the object
     * not disposed, which the late release then disposed after the close.
     */
    @Test
    void aCloseWaitsForAWarmUpBetweenItsPublicationAndItsRelease() throws Exception {
        RefPool<String, Object> pool = pool(builder());
        Thread warmer = executor.submit(Thread::currentThread).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        TestReleaseHooks hooks =
                TestReleaseHooks.pausing(io.refpool.core.internal.ReleaseQueueHooks.Point.QUEUE_LOCK, warmer);
        pool.core().releaseQueue().setHooks(hooks);
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("k"), CancellationToken.none()).toCompletableFuture();
        hooks.awaitArrival(); // published; its reference about to be queued
        Forked<Boolean> closing = fork("closer", () -> {
            pool.close(); // on this thread: it parks only to wait for the warm-up
            return pool.isClosed();
        });
        io.refpool.testkit.TestKit.eventually()
                .until(() -> !closing.thread.isAlive()
                        || closing.thread.getState() == Thread.State.WAITING); // closed, or waiting
        hooks.proceed();
        assertTrue(closing.join(), "closed");
        assertEquals(List.of(), errors, "no open handle reported");
        assertEquals(1, disposed.size(), "disposed by the close");
        assertInstanceOf(PoolClosedException.class, joinedFailure(warming), "closed before the warm-up ended");
    }

    /**
     * A warm-up's factory that flushes, or closes the pool, while another thread's close waits for
     * that very creation returns at once instead of waiting for the close: the two would wait for
     * each other for ever.
     */
    @ParameterizedTest
    @ValueSource(strings = {"flush", "close"})
    void aWarmUpFactoryThatFlushesOrClosesDuringACloseDoesNotWaitForIt(String call) throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<RefPool<String, Object>> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        RefPool<String, Object> pool = builder().build(key -> {
            inFactory.countDown();
            TestKeyedPoolFixtures.awaitLatch(go);
            if (call.equals("flush")) {
                self.get().flush();
            } else {
                self.get().close();
            }
            return key;
        });
        self.set(pool);
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("k"), CancellationToken.none()).toCompletableFuture();
        TestKeyedPoolFixtures.awaitLatch(inFactory);
        Forked<Boolean> closing = fork("closer", () -> {
            pool.close(); // waits for the warm-up's creation
            return pool.isClosed();
        });
        io.refpool.testkit.TestKit.eventually().until(() -> closing.thread.getState() == Thread.State.WAITING);
        go.countDown();
        assertTrue(closing.join(), "closed"); // bounded: a deadlock fails here
        warming.handle((made, failure) -> null).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals(1, disposed.size(), "the object made is disposed");
    }

    /**
     * A warm-up's factory that calls {@code close()} or {@code close(timeout)} on an open pool starts
     * the close on a thread of its own (and waits at most its limit): run inline there, the close
     * would wait for an attached section holder that waits for this very creation.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aWarmUpFactoryClosingAnOpenPoolDoesNotWaitForAHolderWaitingForIt(boolean withALimit) throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CompletableFuture<Boolean> factoryClose = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicReference<RefPool<String, Object>> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        RefPool<String, Object> pool = builder()
                .attachMode(AttachMode.PER_OBJECT)
                .build(key -> {
                    if (key.equals("k")) {
                        inFactory.countDown();
                        TestKeyedPoolFixtures.awaitLatch(go);
                        if (withALimit) {
                            factoryClose.complete(self.get().close(java.time.Duration.ofMillis(200)));
                        } else {
                            self.get().close(); // returns: the close goes on on a thread of its own
                            factoryClose.complete(false);
                        }
                    }
                    return key;
                });
        self.set(pool);
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("k"), CancellationToken.none()).toCompletableFuture();
        TestKeyedPoolFixtures.awaitLatch(inFactory);
        Forked<Void> sectionHolder = io.refpool.testkit.TestKit.forkRun(
                "section holder", () -> pool.run("x", value -> pool.acquire("k").close()));
        io.refpool.testkit.TestKit.awaitParked(sectionHolder.thread); // attached, waiting for k's creation
        go.countDown();
        assertFalse(factoryClose.get(BOUND.toSeconds(), TimeUnit.SECONDS), "returned before the close finished");
        sectionHolder.outcome.handle((done, failure) -> null).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        warming.handle((made, failure) -> null).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        io.refpool.testkit.TestKit.eventually().until(pool::isClosed);
    }

    /**
     * A warm-up's factory that calls {@code close(timeout)} with no other thread about: the close it
     * starts on a thread of its own waits for this very creation, so the call returns at once
     * (false) rather than wait out a limit it cannot meet, a day here; the close then finishes.
     */
    @Test
    void aWarmUpFactoryClosingThePoolWithALimitDoesNotWaitForACloseThatWaitsForIt() throws Exception {
        CompletableFuture<Boolean> factoryClose = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicReference<RefPool<String, Object>> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        RefPool<String, Object> pool = builder().build(key -> {
            factoryClose.complete(self.get().close(java.time.Duration.ofDays(1)));
            return key;
        });
        self.set(pool);
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("k"), CancellationToken.none()).toCompletableFuture();
        assertFalse(factoryClose.get(BOUND.toSeconds(), TimeUnit.SECONDS), "not closed yet: it waits for this factory");
        warming.handle((made, failure) -> null).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        io.refpool.testkit.TestKit.eventually().until(() -> disposed.size() == 1);
    }

    @Test
    void aWarmUpUsesOnlyFreeCapacityAndStopsWhenNoneIsLeft() throws Exception {
        RefPool<String, Object> pool = pool(builder().maxObjects(2));
        Handle<Object> live = pool.attached(() -> pool.acquire("a"));
        assertEquals(1, warm(pool, CancellationToken.none(), "b", "c", "d"));
        assertEquals(2, created.get(), "c and d: no free permit, and no idle object is evicted for them");
        assertEquals(Map.of(), disposed);
        assertEquals(1, pool.stats().idle());
        assertTrue(live.isOpen());
        pool.runAttached(live::close);
        pool.close();
    }

    @Test
    void aCancelledTokenStopsTheWarmUpAndKeepsWhatItMade() throws Exception {
        CancellationSource source = new CancellationSource();
        RefPool<String, Object> pool = builder().build(key -> {
            created.incrementAndGet();
            source.cancel(); // cancelled while the first key's factory runs
            return key;
        });
        assertEquals(1, warm(pool, source.token(), "a", "b", "c"));
        assertEquals(1, created.get());
        assertEquals(1, pool.stats().idle(), "the object made is kept idle");
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get("a"));
    }

    /**
     * A close while a warm-up's factory runs, for a key before the last or for the last: the object
     * it makes is disposed exactly once, as CLOSED, the stage fails with PoolClosedException, and
     * both close and the warm-up finish.
     */
    @ParameterizedTest
    @ValueSource(strings = {"w,x", "w"})
    void aCloseDuringAWarmUpFactoryDisposesItsObjectOnceAndFailsTheStage(String keys) throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        RefPool<String, Object> pool = builder().build(key -> {
            created.incrementAndGet();
            inFactory.countDown();
            finish.await();
            return key;
        });
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of(keys.split(",")), CancellationToken.none()).toCompletableFuture();
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        Forked<Void> closing = fork("closer", () -> {
            pool.close();
            return null;
        });
        io.refpool.testkit.TestKit.awaitParked(closing.thread); // close waits for the warm-up's creation
        assertTrue(pool.isClosed());
        finish.countDown();

        closing.join();
        assertInstanceOf(PoolClosedException.class, joinedFailure(warming));
        assertEquals(Map.of("w", DisposalCause.CLOSED), disposed);
        assertEquals(1, created.get(), "x was never created");
        assertEquals(0, pool.stats().live() + pool.stats().idle());
    }

    /**
     * One single-thread executor for both the warm-up and {@code callAsync}, in {@code GLOBAL}
     * mode: a call granted the gate while the warm-up's task is queued on the one thread. The
     * call's function is queued behind that task, so a warm-up that waited for the gate on the
     * thread would wait for the call, which waits for the thread.
     */
    @Test
    void aWarmUpOnTheCallExecutorsOneThreadDoesNotWaitThereForACallHoldingTheGate() throws Exception {
        Executor one = counting(executor, new CountDownLatch(0));
        RefPool<String, Object> pool =
                pool(builder().attachMode(AttachMode.GLOBAL).executor(one).callExecutor(one));
        Handle<Object> k = pool.attached(() -> pool.acquire("k"));
        CompletableFuture<Integer> warming;
        CompletableFuture<Object> calling;
        try (Attachment held = pool.attach()) { // the gate is taken: both wait for it in line
            calling = pool.callAsync("k", CancellationToken.none(), value -> value)
                    .toCompletableFuture();
            warming = pool.warmUp(List.of("w"), CancellationToken.none()).toCompletableFuture();
        } // the call is granted the gate first, and hands its function to the one thread
        assertEquals("k#1", calling.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertEquals(1, warming.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertEquals(1, pool.stats().idle());
        pool.runAttached(k::close);
        pool.close();
        assertEquals(2, disposed.size());
    }

    /**
     * The other order: the warm-up's factory runs, a call takes the gate meanwhile and queues its
     * function on the one thread, then the factory returns. The warm-up publishes its object once
     * the call gives the gate back, without waiting for it on the thread the call needs; the call,
     * on the thread that made the object, may acquire it meanwhile.
     */
    @Test
    void aWarmUpWhoseFactoryReturnsWhileACallHoldsTheGateDoesNotWaitForItOnTheCallsThread() throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CountDownLatch handedOver = new CountDownLatch(2); // the warm-up's task, then the call's function
        Executor one = counting(executor, handedOver);
        RefPool<String, Object> pool = builder()
                .attachMode(AttachMode.GLOBAL)
                .executor(one)
                .callExecutor(one)
                .build(blockingOn("w", inFactory, finish));
        Handle<Object> k = pool.attached(() -> pool.acquire("k"));
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("w", "x"), CancellationToken.none()).toCompletableFuture();
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        // the call, on the thread that made w, acquires w while w waits for the call's gate
        CompletableFuture<Object> calling = pool.callAsync(
                        "k", CancellationToken.none(), value -> pool.call("w", w -> w))
                .toCompletableFuture();
        assertTrue(handedOver.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the call holds the gate");
        finish.countDown();
        assertEquals("w", calling.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertEquals(2, warming.get(BOUND.toSeconds(), TimeUnit.SECONDS), "x is made after w is published");
        assertEquals(2, pool.stats().idle());
        pool.runAttached(k::close);
        pool.close();
        assertEquals(Map.of("w", DisposalCause.CLOSED, "x", DisposalCause.CLOSED, "k", DisposalCause.CLOSED), disposed);
    }

    /**
     * A warm-up never waits for the gate: it ends while another thread holds it in {@code GLOBAL}
     * mode, its references pending like handles closed off the attachment; they are applied when
     * the gate is given up, and the objects idle. A close then disposes each once.
     */
    @Test
    void aWarmUpEndsWhileTheGateIsHeldAndItsObjectsGoIdleWhenItIsGivenUp() throws Exception {
        RefPool<String, Object> pool = pool(builder().attachMode(AttachMode.GLOBAL));
        try (Attachment held = pool.attach()) {
            assertEquals(2, warm(pool, CancellationToken.none(), "w", "x"));
            assertEquals(2L, pool.stats().live(), "made and published, the warm-up's references pending");
            assertEquals(0L, pool.stats().idle());
        } // the pending releases are applied as the gate is given up
        assertEquals(0L, pool.stats().live());
        assertEquals(2L, pool.stats().idle());
        assertEquals(0L, pool.stats().pendingDecrements());
        pool.close();
        assertEquals(Map.of("w#1", DisposalCause.CLOSED, "x#2", DisposalCause.CLOSED), disposed);
    }

    /**
     * A close on the thread that holds the gate while a warm-up's references are pending: close
     * applies them and disposes each object once; the warm-up had ended with both made.
     */
    @Test
    void aCloseWhileAWarmUpsReleasesArePendingDisposesEachObjectOnce() throws Exception {
        RefPool<String, Object> pool = pool(builder().attachMode(AttachMode.GLOBAL));
        try (Attachment held = pool.attach()) {
            assertEquals(2, warm(pool, CancellationToken.none(), "w", "x"));
            pool.close();
            assertEquals(Map.of("w#1", DisposalCause.CLOSED, "x#2", DisposalCause.CLOSED), disposed);
        }
        assertEquals(0L, pool.stats().live() + pool.stats().idle());
    }

    /**
     * In {@code PER_OBJECT} mode, a section holder that acquires a key a warm-up is creating waits
     * for it attached, and a {@code stopTheWorld()} then waits for that holder. The warm-up
     * publishes without the gate, so the holder goes on, and then the world stops.
     */
    @Test
    void aSectionHolderWaitingForAWarmUpsObjectIsNotHeldBehindAWaitingStopTheWorld() throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        RefPool<String, Object> pool =
                builder().attachMode(AttachMode.PER_OBJECT).build(blockingOn("w", inFactory, finish));
        pool.call("s", value -> value); // s exists, idle
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("w"), CancellationToken.none()).toCompletableFuture();
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        Forked<Object> holder = fork(
                "holder",
                () -> pool.call("s", s -> {
                    try (Handle<Object> w = pool.acquire("w")) { // in s's section: waits for w attached
                        return w.get();
                    }
                }));
        io.refpool.testkit.TestKit.awaitParked(holder.thread);
        Forked<Void> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return null;
            }
        });
        io.refpool.testkit.TestKit.awaitParked(stopper.thread); // waits for the holder's attachment
        finish.countDown();
        assertEquals("w", holder.join());
        stopper.join();
        assertEquals(1, warming.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        pool.close();
        assertEquals(Map.of("s", DisposalCause.CLOSED, "w", DisposalCause.CLOSED), disposed);
    }

    /** A factory returning each key, whose creation of {@code blocked} waits for {@code finish}. */
    private ObjectFactory<String, Object> blockingOn(String blocked, CountDownLatch inFactory, CountDownLatch finish) {
        return key -> {
            created.incrementAndGet();
            if (key.equals(blocked)) {
                inFactory.countDown();
                finish.await();
            }
            return key;
        };
    }

    /** {@code executor}, counting each task handed to it down on {@code handedOver}. */
    private static Executor counting(Executor executor, CountDownLatch handedOver) {
        return task -> {
            executor.execute(task);
            handedOver.countDown();
        };
    }

    @Test
    void aFailingFactoryFailsTheStageAndKeepsTheKeysBeforeIt() {
        RefPool<String, Object> pool = builder().build(key -> {
            if (key.equals("bad")) {
                throw new java.io.IOException("no engine for " + key);
            }
            return key;
        });
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("a", "bad", "c"), CancellationToken.none()).toCompletableFuture();
        Throwable failure = joinedFailure(warming);
        assertInstanceOf(ObjectCreationException.class, failure);
        assertEquals(1, pool.stats().idle(), "a stays warm");
        assertFalse(pool.stats().creations() > 1, "c is not created");
        pool.close();
    }

    @Test
    void anExecutorThatTakesTheTaskAndThenThrowsFailsTheStageAndTheTaskNeverWarms() throws Exception {
        List<Runnable> taken = new ArrayList<>();
        RefPool<String, Object> pool = pool(builder().executor(task -> {
            taken.add(task);
            throw new java.util.concurrent.RejectedExecutionException("queued, then refused");
        }));
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("a", "b"), CancellationToken.none()).toCompletableFuture();
        assertInstanceOf(java.util.concurrent.RejectedExecutionException.class, joinedFailure(warming));

        taken.forEach(Runnable::run); // the executor runs what it took after all

        assertEquals(0, created.get(), "a warm-up whose stage failed makes nothing");
        pool.close();
    }

    @Test
    void aWarmUpItsExecutorHasNotStartedFailsWhenThePoolClosesAndNeverWarmsAfter() throws Exception {
        List<Runnable> taken = new ArrayList<>();
        RefPool<String, Object> pool = pool(builder().executor(taken::add)); // takes it, never runs it by itself
        CompletableFuture<Integer> warming =
                pool.warmUp(List.of("a", "b"), CancellationToken.none()).toCompletableFuture();

        pool.close();

        assertInstanceOf(PoolClosedException.class, joinedFailure(warming));
        taken.forEach(Runnable::run); // run late after all
        assertEquals(0, created.get(), "a warm-up whose stage failed makes nothing");
    }

    @Test
    void badCallsAreRefusedAtTheCall() {
        RefPool<String, Object> cached = pool(builder());
        assertThrows(NullPointerException.class, () -> cached.warmUp(null, CancellationToken.none()));
        assertThrows(NullPointerException.class, () -> cached.warmUp(List.of("a"), null));
        NullPointerException nullKey = assertThrows(
                NullPointerException.class, () -> cached.warmUp(Arrays.asList("a", null), CancellationToken.none()));
        assertTrue(nullKey.getMessage().contains("index 1"), nullKey.getMessage());
        cached.close();
        assertInstanceOf(
                PoolClosedException.class, joinedFailure(cached.warmUp(List.of("a"), CancellationToken.none())));

        RefPool<String, Object> uncached = RefPool.newBuilder().build(key -> key);
        IllegalStateException noCache = assertThrows(
                IllegalStateException.class, () -> uncached.warmUp(List.of("a"), CancellationToken.none()));
        assertTrue(noCache.getMessage().contains("idle cache"), noCache.getMessage());
        assertEquals(0, uncached.stats().creations());
        uncached.close();
    }
}
