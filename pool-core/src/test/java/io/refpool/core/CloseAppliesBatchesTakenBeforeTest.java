package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
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

    /**
     * A close called from a factory whose creation another batch's disposer waits for does not wait
     * for that batch: it would wait for itself.
     */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCloseFromAFactoryDoesNotWaitForABatchWaitingForItsCreation(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        Handle<Session> a = pool.attached(() -> pool.acquire("a"));
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch disposerWaits = new CountDownLatch(1);
        engine.beforeCreate = key -> {
            if (key.equals("k")) {
                creating.countDown();
                TestKeyedPoolFixtures.awaitLatch(disposerWaits);
                pool.close(); // the batch of a is out, its disposer waiting for this creation
            }
        };
        Forked<Void> creator = forkRun("creator", () -> pool.call("k", session -> null));
        TestKeyedPoolFixtures.awaitLatch(creating);
        forkRun("closer-of-a", a::close).join(); // pending: the creator attached before
        engine.afterDispose = session -> {
            if (session.key.equals("a")) { // the batch's disposer acquires k, being created
                try {
                    pool.attached(() -> pool.acquire("k")).close();
                } catch (PoolClosedException closed) {
                    // the close may come first
                }
            }
        };
        Forked<Void> flusher = forkRun("flusher", pool::flush);
        eventually().until(() -> flusher.thread.getState() == Thread.State.WAITING); // for the creation
        disposerWaits.countDown();
        creator.outcome.handle((v, t) -> null).get(20, java.util.concurrent.TimeUnit.SECONDS);
        flusher.outcome.handle((v, t) -> null).get(20, java.util.concurrent.TimeUnit.SECONDS);
        assertTrue(pool.isClosed());
        engine.awaitAllDisposedExactlyOnce();
    }
}
