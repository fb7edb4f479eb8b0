package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shared gate in each of its bias states: forced on (every attach on its thread's stripe),
 * forced off (every attach on the plain gate word) and adaptive (off for a while after each
 * {@code stopTheWorld()}), in {@code SHARED} and {@code PER_OBJECT} mode. A reduced scenario of
 * the model and fault suites runs in each: nested attach, {@code detached()} around a
 * stop-the-world, a {@code callAsync} whose gate hold moves threads, a section that throws, a
 * virtual thread holding across its unmount, and threads racing stop-the-world sections; after it
 * nothing is held, and every object was disposed once, attached.
 */
class GateBiasStatesTest {
    private static final int ROUNDS = 2_000;

    private final TestResources resources = new TestResources();

    static Stream<Arguments> states() {
        List<Arguments> all = new ArrayList<>();
        for (AttachMode mode : List.of(AttachMode.SHARED, AttachMode.PER_OBJECT)) {
            for (Boolean bias : new Boolean[] {Boolean.TRUE, Boolean.FALSE, null}) {
                all.add(Arguments.of(mode, bias));
            }
        }
        return all.stream();
    }

    private RefPool<String, Resource> pool(AttachMode mode, Boolean bias) {
        RefPool<String, Resource> pool =
                resources.build(resources.builder().attachMode(mode).maxObjects(3));
        pool.core().setGateBiasForTests(bias);
        return pool;
    }

    /**
     * An {@code attachAsync} on an attached thread runs nested at once; a {@code detached()} inside
     * it gives the whole gate up, so a stop of the world there is not held back by the thread's own
     * extra hold. Before, the nested run kept that hold until it returned, and the stop waited for
     * itself.
     */
    @ParameterizedTest(name = "{0}, bias {1}")
    @MethodSource("states")
    void aDetachedSectionInANestedAttachAsyncLeavesTheGateWhole(AttachMode mode, Boolean bias) throws Throwable {
        RefPool<String, Resource> pool = pool(mode, bias);
        String result;
        try (Attachment outer = pool.attach()) {
            result = pool.attachAsync(
                            CancellationToken.none(),
                            nested -> nested.detached(() -> {
                                try (Attachment alone = pool.stopTheWorld(java.time.Duration.ofSeconds(2))) {
                                    return "stopped";
                                }
                            }))
                    .toCompletableFuture()
                    .get(BOUND.toSeconds(), TimeUnit.SECONDS);
        }
        assertEquals("stopped", result);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @ParameterizedTest(name = "{0}, bias {1}")
    @MethodSource("states")
    void reducedScenarioHoldsNothingAndDisposesOnce(AttachMode mode, Boolean bias) throws Throwable {
        RefPool<String, Resource> pool = pool(mode, bias);
        AtomicInteger inside = new AtomicInteger();

        try (Attachment outer = pool.attach()) { // reentrancy and a nested attach
            try (Attachment nested = pool.attach();
                    Handle<Resource> a = pool.acquire("a")) {
                Forked<Void> world = forkRun("stop the world", () -> {
                    try (Attachment alone = pool.stopTheWorld()) {
                        assertEquals(0, inside.get(), "nobody attached while the world stops");
                    }
                });
                String r = outer.detached(
                        () -> { // the hold is suspended: the world stops meanwhile
                            world.outcome
                                    .orTimeout(BOUND.toMillis(), TimeUnit.MILLISECONDS)
                                    .join();
                            return "done";
                        });
                assertEquals("done", r);
                assertTrue(pool.isAttached(), "attached again after detached()");
                assertEquals("a", a.get().key);
            }
        }

        // a callAsync's gate hold is taken on this thread and given back on the pool's
        assertEquals(
                "b",
                pool.callAsync("b", CancellationToken.none(), res -> res.key)
                        .toCompletableFuture()
                        .get(BOUND.toMillis(), TimeUnit.MILLISECONDS));

        // a section that throws: its gate hold, section and reference are given back
        assertThrows(
                RuntimeException.class,
                () -> pool.call("boom", res -> {
                    throw new IllegalStateException("the section throws");
                }));

        virtualThreadHoldingAcrossUnmountHoldsTheWorldBack(pool);

        // threads racing stop-the-world sections
        CyclicBarrier start = new CyclicBarrier(3);
        List<Forked<Void>> workers = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            String key = "k" + t;
            workers.add(forkRun("worker-" + t, () -> {
                start.await(BOUND.toSeconds(), TimeUnit.SECONDS);
                for (int i = 0; i < ROUNDS; i++) {
                    try (Attachment attached = pool.attach()) {
                        inside.incrementAndGet();
                        try (Handle<Resource> h = pool.acquire(key)) {
                            assertEquals(key, h.get().key);
                        }
                        inside.decrementAndGet();
                    }
                }
            }));
        }
        workers.add(forkRun("stopper", () -> {
            start.await(BOUND.toSeconds(), TimeUnit.SECONDS);
            for (int i = 0; i < ROUNDS / 20; i++) {
                try (Attachment alone = pool.stopTheWorld()) {
                    assertEquals(0, inside.get(), "an attached thread inside a stopped world");
                }
            }
        }));
        for (Forked<Void> w : workers) {
            w.join();
        }

        assertFalse(pool.isAttached());
        forkRun("world stops at once", () -> pool.stopTheWorld().close()).join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** A virtual thread that parks while attached keeps the world from stopping until it leaves. */
    private static void virtualThreadHoldingAcrossUnmountHoldsTheWorldBack(RefPool<String, Resource> pool)
            throws Throwable {
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        if (virtualThreads == null) {
            return; // JDK 17: no virtual threads
        }
        try {
            CountDownLatch attached = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            Future<?> holder = virtualThreads.submit(() -> {
                try (Attachment a = pool.attach()) {
                    attached.countDown();
                    leave.await(); // unmounts while attached
                }
                return null;
            });
            assertTrue(attached.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            Forked<Void> world = forkRun("world", () -> pool.stopTheWorld().close());
            awaitParked(world.thread);
            leave.countDown();
            holder.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            world.join();
        } finally {
            virtualThreads.shutdown();
        }
    }
}
