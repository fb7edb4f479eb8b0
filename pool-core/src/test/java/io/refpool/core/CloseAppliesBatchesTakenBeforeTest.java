package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code close()} applies every release of a handle closed before it began, also one in a batch
 * another thread took and has not finished: a drain applies its whole batch first, then runs the
 * disposers, and one that gives the gate up ({@code detached()}) let the close attach, dispose
 * what was idle and return while the batch's other object still waited for its disposer.
 */
class CloseAppliesBatchesTakenBeforeTest {
    private static boolean waitsForBatches(Thread t) {
        return t.getState() == Thread.State.WAITING
                && Arrays.stream(t.getStackTrace())
                        .anyMatch(e -> e.getMethodName().equals("awaitOutUpTo"));
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeWaitsForABatchTakenBeforeIt(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        Handle<Session> a = pool.attached(() -> pool.acquire("a"));
        Handle<Session> b = pool.attached(() -> pool.acquire("b"));
        Session objectOfB = b.get();
        forkRun("closer-of-a", a::close).join(); // off-attachment: pending
        forkRun("closer-of-b", b::close).join();
        assertEquals(2, pool.stats().pendingDecrements());
        CountDownLatch inDetached = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        engine.afterDispose = session -> {
            if (session.key.equals("a")) { // the batch's first disposer gives the gate up
                try (Attachment attached = pool.attach()) {
                    attached.detached(() -> {
                        inDetached.countDown();
                        TestKeyedPoolFixtures.awaitLatch(goOn);
                        return null;
                    });
                }
            }
        };
        Forked<Void> flusher = forkRun("flusher", pool::flush); // takes both releases as one batch
        TestKeyedPoolFixtures.awaitLatch(inDetached);

        Forked<Void> closer = forkRun("pool-closer", pool::close);
        eventually().until(() -> closer.outcome.isDone() || waitsForBatches(closer.thread));
        assertFalse(closer.outcome.isDone(), "close() returned with b's release still in another thread's batch");
        assertFalse(objectOfB.isDisposed());
        goOn.countDown();
        flusher.join();
        closer.join();
        assertTrue(objectOfB.isDisposed());
        assertEquals(0, engine.errors(PoolError.Kind.HANDLES_OPEN_AT_CLOSE).size(), "no handle of b was open");
        engine.assertAllDisposedExactlyOnce();
    }

    private static boolean waitsIn(Thread t, String what) {
        return t != null
                && t.getState() == Thread.State.WAITING
                && Arrays.stream(t.getStackTrace())
                        .anyMatch(e -> e.getMethodName().equals(what)
                                || e.getClassName().endsWith(what));
    }

    /** Ends {@code forked} within a bound, or fails naming where the threads of the scene wait. */
    private static void settles(Forked<?> forked) throws Exception {
        try {
            forked.outcome.handle((value, failure) -> null).get(20, TimeUnit.SECONDS);
        } catch (TimeoutException stuck) {
            StringBuilder dump = new StringBuilder();
            Thread.getAllStackTraces().forEach((t, stack) -> {
                if (t.getName().startsWith("scene-")) {
                    dump.append("\n").append(t.getName()).append(' ').append(t.getState());
                    for (StackTraceElement e : stack) {
                        dump.append("\n    at ").append(e);
                    }
                }
            });
            fail(forked.thread.getName() + " never ended:" + dump);
        }
    }

    /**
     * "x" invalidated and its handle closed off-attachment; another thread takes that release in
     * its batch, and x's disposer waits for what {@code inside} holds: the creation of "b", or the
     * section of "y"; {@code inside} then calls {@code end} (the pool's close or flush), which must
     * not wait for that batch: it would wait for itself.
     */
    private static void endCalledFromWhatADisposerWaitsFor(
            AttachMode mode, boolean section, Consumer<RefPool<String, Session>> end) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        Handle<Session> x = pool.attached(() -> pool.acquire("x"));
        pool.attached(x::invalidate); // disposed when its count reaches 0
        AtomicReference<Thread> disposing = new AtomicReference<>();
        engine.afterDispose = session -> {
            if (session.key.equals("x")) { // a disposer may use the pool
                disposing.set(Thread.currentThread());
                try {
                    pool.call(section ? "y" : "b", value -> null);
                } catch (PoolClosedException closed) {
                    // the close came first
                }
            }
        };
        CountDownLatch inside = new CountDownLatch(1);
        String awaited = section ? "Section" : "awaitDone";
        Runnable holder = () -> {
            inside.countDown();
            eventually().until(() -> waitsIn(disposing.get(), awaited));
            end.accept(pool);
        };
        engine.beforeCreate = key -> {
            if (key.equals("b")) {
                holder.run();
            }
        };
        Forked<Void> holding = forkRun("scene-holder", () -> {
            try {
                pool.call(section ? "y" : "b", value -> {
                    if (section) {
                        holder.run();
                    }
                    return null;
                });
            } catch (PoolClosedException closed) {
                // the closed pool may refuse the object
            }
        });
        TestKeyedPoolFixtures.awaitLatch(inside);
        forkRun("closer-of-x", x::close).join(); // pending: the holder attached before
        Forked<Void> applier = forkRun("scene-applier", () -> pool.attached(() -> null)); // takes x's release
        settles(holding);
        settles(applier);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCloseFromAFactoryDoesNotWaitForABatchWaitingForItsCreation(AttachMode mode) throws Exception {
        endCalledFromWhatADisposerWaitsFor(mode, false, RefPool::close);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aFlushFromAFactoryDoesNotWaitForABatchWaitingForItsCreation(AttachMode mode) throws Exception {
        endCalledFromWhatADisposerWaitsFor(mode, false, RefPool::flush);
    }

    @Test
    void aCloseFromACallDoesNotWaitForABatchWaitingForItsSection() throws Exception {
        endCalledFromWhatADisposerWaitsFor(AttachMode.PER_OBJECT, true, RefPool::close);
    }

    /**
     * The scene of {@link #closeWaitsForABatchTakenBeforeIt}, where the disposer that gave the gate
     * up then closes the pool itself, in its {@code detached()} section: with another close running,
     * it must not wait for that close, which waits for its batch.
     */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCloseFromADetachedDisposerDoesNotWaitForACloseWaitingForItsBatch(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        Handle<Session> a = pool.attached(() -> pool.acquire("a"));
        Handle<Session> b = pool.attached(() -> pool.acquire("b"));
        forkRun("closer-of-a", a::close).join(); // off-attachment: pending
        forkRun("closer-of-b", b::close).join();
        CountDownLatch inDetached = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        engine.afterDispose = session -> {
            if (session.key.equals("a")) {
                try (Attachment attached = pool.attach()) {
                    attached.detached(() -> {
                        inDetached.countDown();
                        TestKeyedPoolFixtures.awaitLatch(goOn);
                        pool.close();
                        return null;
                    });
                }
            }
        };
        Forked<Void> flusher = forkRun("scene-flusher", pool::flush); // takes both releases as one batch
        TestKeyedPoolFixtures.awaitLatch(inDetached);
        Forked<Void> closer = forkRun("scene-closer", pool::close);
        eventually().until(() -> closer.outcome.isDone() || waitsForBatches(closer.thread));
        goOn.countDown();
        settles(flusher);
        settles(closer);
        engine.assertAllDisposedExactlyOnce();
    }

    /**
     * With no other close, its {@code close(Duration)} starts the close, which waits for this
     * disposer's batch, on a thread of its own, and returns at once rather than wait out its limit;
     * it never waits, unbounded, for a call still running (run there, the close waited for the
     * call, past the limit). The close finishes once the batch and the call end. The shared modes
     * only: in {@code GLOBAL} mode a running call holds the one gate, and no batch runs meanwhile.
     */
    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void aBoundedCloseFromADetachedDisposerReturnsAtOnce(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        Handle<Session> a = pool.attached(() -> pool.acquire("a"));
        pool.runAttached(() -> pool.acquire("idle").close()); // the close disposes it
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch callGoOn = new CountDownLatch(1);
        CountDownLatch answered = new CountDownLatch(1);
        engine.afterDispose = session -> {
            if (session.key.equals("a")) {
                try (Attachment attached = pool.attach()) {
                    attached.detached(() -> {
                        pool.close(Duration.ofHours(1)); // would wait out its limit, or the call
                        answered.countDown();
                        return null;
                    });
                }
            }
        };
        Forked<Void> caller = forkRun(
                "scene-caller",
                () -> pool.run("c", session -> {
                    inCall.countDown();
                    TestKeyedPoolFixtures.awaitLatch(callGoOn);
                }));
        TestKeyedPoolFixtures.awaitLatch(inCall);
        forkRun("closer-of-a", a::close).join(); // off-attachment, after the call attached: pending
        Forked<Void> flusher = forkRun("scene-flusher", pool::flush); // its batch runs a's disposer
        boolean inTime = answered.await(20, TimeUnit.SECONDS);
        callGoOn.countDown();
        settles(flusher);
        settles(caller);
        assertTrue(inTime, "close(1 h) from a detached disposer returned at once");
        eventually().until(pool::isClosed);
        engine.awaitAllDisposedExactlyOnce();
    }
}
