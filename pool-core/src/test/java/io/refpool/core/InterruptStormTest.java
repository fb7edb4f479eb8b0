package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every blocking wait of the pool, interrupted at random: threads attach, acquire within a limit
 * (waiting for capacity), take sections, stop the world, flush, call and acquire asynchronously
 * with tokens a chaos thread cancels, while the chaos thread also interrupts them. A wait may end
 * with the interrupt, a timeout, a cancellation or exhausted capacity, and nothing else; whatever
 * ends it, nothing is lost: once every handle is closed nothing is live, every permit can be taken
 * again, and after close every object was disposed once, attached, never while a handle was open.
 * It runs in every mode, with plain options and with strict access, every handle tracked and an
 * idle cache that expires, on platform threads and on virtual threads.
 */
class InterruptStormTest {
    private static final int WORKERS = 3;
    private static final int MAX_OBJECTS = 2;
    private static final int OPS = 3_000;
    private static final Duration SHORT = Duration.ofMillis(2);

    /** The pool's options besides its mode and bound. */
    enum Options {
        /** No idle cache, leak detection as by default, lax access. */
        PLAIN {
            @Override
            RefPool.Builder<String, Session> apply(RefPool.Builder<String, Session> builder) {
                return builder;
            }
        },
        /**
         * Strict access, every handle tracked, an idle cache of one that expires in a millisecond,
         * releases drained after a millisecond.
         */
        STRICT_TRACKED_EXPIRING {
            @Override
            RefPool.Builder<String, Session> apply(RefPool.Builder<String, Session> builder) {
                return builder.strictAccess(true)
                        .leakDetection(LeakDetection.PARANOID)
                        .drainDelay(Duration.ofMillis(1))
                        .idle(cache -> cache.maximumSize(1).expireAfterAccess(Duration.ofMillis(1)));
            }
        };

        abstract RefPool.Builder<String, Session> apply(RefPool.Builder<String, Session> builder);
    }

    static Stream<Arguments> modesAndOptions() {
        return Stream.of(AttachMode.values())
                .flatMap(mode -> Stream.of(Options.values()).map(options -> Arguments.of(mode, options)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("modesAndOptions")
    void onPlatformThreads(AttachMode mode, Options options) throws Exception {
        storm(mode, options, null);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("modesAndOptions")
    void onVirtualThreads(AttachMode mode, Options options) throws Throwable {
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        assumeTrue(virtualThreads != null, "virtual threads need JDK 21+");
        try {
            storm(mode, options, virtualThreads);
        } finally {
            virtualThreads.shutdownNow();
        }
    }

    /** The storm on platform threads ({@code executor} null) or on the executor's threads. */
    private static void storm(AttachMode mode, Options options, ExecutorService executor) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(options.apply(engine.builder().attachMode(mode).maxObjects(MAX_OBJECTS)));
        Thread[] workers = new Thread[WORKERS];
        CountDownLatch started = new CountDownLatch(WORKERS);
        List<CompletableFuture<Void>> finished = new ArrayList<>();
        List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        List<CancellationSource> tokens = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Handle<Session>>> asyncs = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        for (int w = 0; w < WORKERS; w++) {
            int id = w;
            long seed = 31L * w + mode.ordinal();
            CompletableFuture<Void> done = new CompletableFuture<>();
            finished.add(done);
            Runnable body = () -> {
                workers[id] = Thread.currentThread();
                started.countDown();
                try {
                    work(pool, seed, tokens, asyncs, unexpected);
                    done.complete(null);
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            };
            if (executor == null) {
                new Thread(body, "worker-" + w).start();
            } else {
                executor.execute(body);
            }
        }
        assertTrue(started.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the workers started");
        Thread chaos = new Thread(
                () -> {
                    SplittableRandom random = new SplittableRandom(7);
                    while (!stop.get()) {
                        workers[random.nextInt(WORKERS)].interrupt();
                        if (!tokens.isEmpty()) {
                            tokens.get(random.nextInt(tokens.size())).cancel();
                        }
                        LockSupport.parkNanos(random.nextInt(20_000, 200_000));
                    }
                },
                "chaos");
        chaos.start();
        try {
            for (int w = 0; w < WORKERS; w++) {
                try {
                    finished.get(w).get(BOUND.toSeconds() * 4, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException stuck) {
                    throw new AssertionError("worker " + w + " is stuck:\n" + TestKit.describeStack(workers[w]), stuck);
                }
            }
        } finally {
            stop.set(true);
        }
        chaos.join();
        assertEquals(List.of(), unexpected, "only the contract's failures end a wait");

        for (CompletableFuture<Handle<Session>> async : asyncs) {
            try {
                async.get(BOUND.toSeconds(), TimeUnit.SECONDS); // its handle is closed when it arrives
            } catch (java.util.concurrent.TimeoutException stuck) {
                throw new AssertionError("an acquireAsync never settled (a permit lost?): " + pool.stats(), stuck);
            } catch (CancellationException | java.util.concurrent.ExecutionException ended) {
                assertTrue(
                        ended instanceof CancellationException || ended.getCause() instanceof CancellationException,
                        "an async wait ends granted or cancelled: " + ended);
            }
        }
        pool.flush();
        assertEquals(0, pool.stats().live(), "every reference was given back");
        assertEquals(0, pool.stats().capacityWaiters(), "nobody is left waiting for capacity");
        CapacityTest.assertAllPermitsFree(pool, MAX_OBJECTS);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        assertEquals(List.of(), engine.violations);
        assertEquals(List.of(), engine.errors, "no callback failed, so the pool reported nothing");
    }

    private static void work(
            RefPool<String, Session> pool,
            long seed,
            List<CancellationSource> tokens,
            List<CompletableFuture<Handle<Session>>> asyncs,
            List<Throwable> unexpected) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int op = 0; op < OPS; op++) {
            String key = "k" + random.nextInt(4);
            try {
                switch (random.nextInt(7)) {
                    case 0 -> {
                        try (Attachment attached = pool.attach()) {
                            use(pool.acquire(key));
                        }
                    }
                    case 1 -> use(pool.acquire(key, SHORT)); // acquired detached
                    case 2 -> {
                        try (Attachment attached = pool.attach(SHORT)) {
                            Handle<Session> handle = pool.acquire(key);
                            try (Guard section = handle.section(SHORT)) {
                                Session session = handle.get(); // strict access: inside the section
                                session.openHandles.incrementAndGet();
                                LockSupport.parkNanos(10_000);
                                session.openHandles.decrementAndGet();
                            } finally {
                                handle.close();
                            }
                        }
                    }
                    case 3 -> {
                        try (Attachment world = pool.stopTheWorld(SHORT)) {
                            LockSupport.parkNanos(10_000);
                        }
                    }
                    case 4 -> pool.flush();
                    case 5 -> pool.call(key, session -> session.key);
                    default -> {
                        CancellationSource source = new CancellationSource();
                        tokens.add(source);
                        CompletableFuture<Handle<Session>> async =
                                pool.acquireAsync(key, source.token()).toCompletableFuture();
                        async.thenAccept(Handle::close); // on whichever thread completes it
                        asyncs.add(async);
                    }
                }
            } catch (WaitInterruptedException
                    | WaitTimeoutException
                    | CapacityExhaustedException
                    | CancellationException expected) {
                // a wait the chaos ended, or the bound reached: nothing is held
            } catch (Throwable t) {
                unexpected.add(t);
            }
            Thread.interrupted(); // a status the chaos left after the wait ended
        }
    }

    /**
     * Uses the object through {@code Handle.call} (attached, and in its section in {@code
     * PER_OBJECT} mode, as strict access requires), then closes the handle, attached or not.
     */
    private static void use(Handle<Session> handle) {
        try {
            handle.call(session -> {
                session.openHandles.incrementAndGet();
                return session.openHandles.decrementAndGet();
            });
        } finally {
            handle.close();
        }
    }
}
