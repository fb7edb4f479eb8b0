package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.describeStack;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
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
     * {@code GLOBAL}: thread X applies a batch whose disposer creates, its factory with the gate
     * given up; Y, in an {@code attachAsync} function, keeps the gate and flushes: waiting for X's
     * batch, which needs the gate back, would wait for ever.
     */
    @Test
    void aFlushInAGlobalAsyncStepDoesNotWaitForABatchWhoseThreadGaveTheGateUp() throws Exception {
        CountDownLatch inFactory = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        AtomicInteger disposals = new AtomicInteger();
        AtomicReference<RefPool<String, String>> self = new AtomicReference<>();
        RefPool<String, String> pool = RefPool.newBuilder()
                .attachMode(AttachMode.GLOBAL)
                .drainDelay(Duration.ofHours(1)) // only attaches apply releases
                .disposer((String key, String object, DisposalCause cause) -> {
                    disposals.incrementAndGet();
                    if (key.equals("a")) {
                        self.get().acquire("b").close(); // a cascade through another key
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
        Forked<Void> x = fork("x", () -> {
            try (Attachment attached = pool.attach()) { // applies the batch: a's disposer creates b
                return null;
            }
        });
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "b's factory runs inside x's batch");
        Forked<String> y = fork("y", () -> pool.attachAsync(CancellationToken.none(), attachment -> {
                    pool.flush();
                    return "flushed";
                })
                .toCompletableFuture()
                .get(BOUND.toSeconds(), TimeUnit.SECONDS));
        try {
            assertEquals("flushed", returnsOrFail(y, "y's flush waits for x's batch holding the gate x needs"));
        } finally {
            finish.countDown();
        }
        x.join();
        gateIsWhole(pool);
        assertEquals(2, disposals.get(), "a and b, once each");
    }
}
