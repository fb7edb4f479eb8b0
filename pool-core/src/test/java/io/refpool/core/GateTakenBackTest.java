package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.describeStack;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A thread that gave the gate up (a {@code detached()} section, a gate-free {@code GLOBAL} factory,
 * another thread's batch doing either) takes it back afterwards: nothing it or another thread does
 * meanwhile may keep it from doing so. Each test fails by the thread never returning; the bound
 * only tells a hang from a slow machine.
 */
class GateTakenBackTest {
    private static final long HANG_SECONDS = 10;

    private static <T> T returnsOrFail(Forked<T> thread, String what) throws Exception {
        try {
            return thread.outcome.get(HANG_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException stuck) {
            return fail(what + ": " + describeStack(thread.thread));
        }
    }

    /** The gate is whole: a stop of the world gets in and leaves, and the pool closes. */
    private static void gateIsWhole(RefPool<String, String> pool) {
        try (Attachment world = pool.stopTheWorld(Duration.ofSeconds(HANG_SECONDS))) {
            // nothing
        }
        pool.close();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachmentLeftOpenInADetachedSectionEndsWithIt(AttachMode mode) throws Exception {
        RefPool<String, String> pool = RefPool.newBuilder().attachMode(mode).build((String key) -> "object of " + key);
        Forked<Integer> thread = fork("detacher", () -> {
            try (Attachment outer = pool.attach()) {
                Attachment leftOpen = outer.detached(() -> pool.attach()); // never closed
                IllegalStateException late = assertThrows(IllegalStateException.class, leftOpen::close);
                assertTrue(late.getMessage().contains("already closed"), late.getMessage());
                try (Handle<String> handle = pool.acquire("k")) { // attached again, at the outer level
                    return handle.get().length();
                }
            }
        });
        assertEquals("object of k".length(), returnsOrFail(thread, "the thread never took the gate back"));
        gateIsWhole(pool);
    }

    @Test
    void anAttachmentLeftOpenByAGateFreeFactoryEndsWithIt() throws Exception {
        AtomicReference<RefPool<String, String>> self = new AtomicReference<>();
        RefPool<String, String> pool = RefPool.newBuilder()
                .attachMode(AttachMode.GLOBAL)
                .build((String key) -> {
                    self.get().attach(); // never closed
                    return "object of " + key;
                });
        self.set(pool);
        Forked<String> creator = fork("creator", () -> {
            try (Attachment outer = pool.attach();
                    Handle<String> handle = pool.acquire("k")) {
                return handle.get();
            }
        });
        assertEquals("object of k", returnsOrFail(creator, "the creator never took the gate back"));
        gateIsWhole(pool);
    }

    /**
     * {@code GLOBAL}: "a"'s release pending; thread X's attach applies it, and "a"'s disposer
     * acquires "b", whose factory gives the gate up and waits for {@link #finish}: X's batch is out
     * and X needs the gate back to finish it.
     */
    private static final class BatchOut {
        final CountDownLatch inFactory = new CountDownLatch(1);
        final CountDownLatch finish = new CountDownLatch(1);
        final CountDownLatch aDisposed = new CountDownLatch(1);
        final AtomicInteger disposals = new AtomicInteger();
        final RefPool<String, String> pool;
        final Forked<Void> x;

        BatchOut() throws Exception {
            AtomicReference<RefPool<String, String>> self = new AtomicReference<>();
            pool = RefPool.newBuilder()
                    .attachMode(AttachMode.GLOBAL)
                    .drainDelay(Duration.ofHours(1)) // only attaches apply releases
                    .disposer((String key, String object, DisposalCause cause) -> {
                        disposals.incrementAndGet();
                        if (key.equals("a")) {
                            self.get().acquire("b").close(); // a cascade through another key
                            aDisposed.countDown();
                        }
                    })
                    .build((String key) -> {
                        if (key.equals("b")) {
                            inFactory.countDown();
                            assertTrue(finish.await(BOUND.toSeconds(), TimeUnit.SECONDS), "let finish");
                        }
                        return "object of " + key;
                    });
            self.set(pool);
            Handle<String> a;
            try (Attachment attached = pool.attach()) {
                a = pool.acquire("a");
            }
            a.close(); // unattached: pending
            x = fork("x", () -> {
                try (Attachment attached = pool.attach()) { // applies the batch: a's disposer creates b
                    return null;
                }
            });
            assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "b's factory runs inside x's batch");
        }

        /** X finished, the gate is whole, and a and b were disposed once each. */
        void end() throws Exception {
            x.join();
            gateIsWhole(pool);
            assertEquals(2, disposals.get(), "a and b, once each");
        }
    }

    /**
     * Y, in an {@code attachAsync} function, keeps the gate and flushes: waiting for X's batch,
     * which needs the gate back, would wait for ever.
     */
    @Test
    void aFlushInAGlobalAsyncStepDoesNotWaitForABatchWhoseThreadGaveTheGateUp() throws Exception {
        BatchOut out = new BatchOut();
        Forked<String> y = fork("y", () -> out.pool
                .attachAsync(CancellationToken.none(), attachment -> {
                    out.pool.flush();
                    return "flushed";
                })
                .toCompletableFuture()
                .get(BOUND.toSeconds(), TimeUnit.SECONDS));
        try {
            assertEquals("flushed", returnsOrFail(y, "y's flush waits for x's batch holding the gate x needs"));
        } finally {
            out.finish.countDown();
        }
        out.end();
    }

    /**
     * Y flushes in a {@code detached()} section of its {@code attachAsync} function: there it holds
     * no gate, so its flush waits for X's batch, taken before it, as any {@code GLOBAL} flush does
     * with the gate given up. X is let finish once Y waits in its flush (or returned).
     */
    @Test
    void aFlushInADetachedSectionOfAGlobalAsyncFunctionWaitsForAnotherThreadsBatch() throws Exception {
        BatchOut out = new BatchOut();
        AtomicReference<Thread> yThread = new AtomicReference<>();
        Forked<Boolean> y = fork("y", () -> out.pool
                .attachAsync(CancellationToken.none(), attachment -> {
                    yThread.set(Thread.currentThread());
                    return attachment.detached(() -> {
                        out.pool.flush();
                        return out.aDisposed.getCount() == 0;
                    });
                })
                .toCompletableFuture()
                .get(BOUND.toSeconds(), TimeUnit.SECONDS));
        try {
            eventually().until(() -> y.outcome.isDone() || waitsForABatch(yThread.get()));
        } finally {
            out.finish.countDown();
        }
        assertTrue(y.join(), "the flush returned after x's batch, taken before it, was applied");
        out.end();
    }

    private static boolean waitsForABatch(Thread thread) {
        return thread != null
                && Arrays.stream(thread.getStackTrace())
                        .anyMatch(e -> e.getMethodName().equals("awaitOutUpTo"));
    }
}
