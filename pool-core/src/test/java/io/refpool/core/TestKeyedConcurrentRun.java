package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Scheduler;
import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationSource;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One seeded run of several threads doing random operations on one pool, for
 * {@link PoolModelPropertyTest}. The seed fixes each thread's operations, not their interleaving.
 *
 * <p>While it runs, each thread checks what the model can say without knowing the interleaving: a
 * key it holds a handle to has one object, which acquire and share return; an exception is one the
 * model allows at that moment (no capacity, a timed-out wait, a closed pool). The engine's disposer
 * checks that nothing is disposed while a thread holds a handle to it, off attachment, or twice.
 * Once all threads are done and every handle is closed, the model is simple: nothing live, nothing
 * pending once {@code pool.close()} returns, every object disposed exactly once, every future
 * settled.
 */
final class TestKeyedConcurrentRun {
    private static final String[] KEYS = {"k0", "k1", "k2", "k3", "k4"};
    private static final Duration EXPIRY = Duration.ofSeconds(10);

    final long seed;
    final List<String> trace = Collections.synchronizedList(new ArrayList<>());
    private final Random setup;
    private final int threads;
    private final int steps;
    private final AttachMode mode;
    private final boolean bounded;
    private final int maxObjects;
    private final boolean expiring;
    private final int closingThread; // -1: the pool is closed after the threads finish
    private final int closingStep;
    private final Engine engine = new Engine();
    private final ManualTicker ticker = new ManualTicker();
    private final RefPool<String, Session> pool;
    private final Queue<Handle<Session>> handedOver = new ConcurrentLinkedQueue<>();
    private final List<CompletableFuture<Handle<Session>>> futures = new CopyOnWriteArrayList<>();

    TestKeyedConcurrentRun(long seed, int threads, int steps) {
        this.seed = seed;
        this.setup = new Random(seed);
        this.threads = threads;
        this.steps = steps;
        this.mode = setup.nextBoolean() ? AttachMode.GLOBAL : AttachMode.SHARED;
        this.bounded = setup.nextBoolean();
        this.expiring = setup.nextBoolean();
        this.closingThread = setup.nextInt(4) == 0 ? setup.nextInt(threads) : -1;
        this.closingStep = setup.nextInt(steps);
        RefPool.Builder<String, Session> builder =
                engine.builder().attachMode(mode).drainDelay(Duration.ofMillis(1 + setup.nextInt(10)));
        this.maxObjects = 2 + setup.nextInt(3);
        if (bounded) {
            builder.maxObjects(maxObjects);
        }
        int idleChoice = setup.nextInt(3);
        if (idleChoice == 1) {
            builder.idle(cache -> cache.maximumSize(2).executor(Runnable::run));
        } else if (idleChoice == 2 || expiring) {
            builder.idle(cache -> cache.expireAfterAccess(EXPIRY)
                    .ticker(ticker)
                    .scheduler(Scheduler.disabledScheduler())
                    .executor(Runnable::run));
        }
        this.pool = engine.build(builder);
        trace.add("pool: " + mode + ", bounded " + bounded + ", idle " + idleChoice + ", expiring " + expiring
                + ", closed by thread " + closingThread + " at step " + closingStep);
    }

    void run() throws Exception {
        List<TestKit.Forked<Void>> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            ThreadRun run = new ThreadRun(t, new Random(seed + 31L * (t + 1)));
            workers.add(TestKit.fork("model-" + t, run::run));
        }
        for (TestKit.Forked<Void> worker : workers) {
            worker.join();
        }
        Handle<Session> left;
        while ((left = handedOver.poll()) != null) {
            left.get().openHandles.decrementAndGet();
            left.close();
        }
        boolean closedDuringRun = pool.isClosed();
        if (!closedDuringRun) {
            assertIdleObjectsAreCached();
        }
        pool.close();
        engine.assertNoViolations();
        if (!closedDuringRun) {
            // every handle was closed before close(): its drain leaves nothing pending or undisposed
            assertEquals(0, pool.stats().pendingDecrements(), "nothing pending once close returns");
            engine.assertAllDisposedExactlyOnce();
        } else {
            // handles closed off-attachment after close are released by the drainer
            engine.awaitAllDisposedExactlyOnce();
            eventually().until(() -> pool.stats().pendingDecrements() == 0);
            // the drainer counts a disposal after its disposer returned and the slot was freed:
            // the counters (and the meters read from them) settle when the last one is counted
            eventually().until(() -> pool.stats().disposals() == pool.stats().creations());
        }
        PoolStats stats = pool.stats();
        assertEquals(0, stats.live());
        assertEquals(0, stats.idle());
        assertEquals(0, stats.capacityWaiters());
        assertEquals(0, pool.core().readings().liveNow(), "the meters' live count");
        assertEquals(0, pool.core().readings().idleNow(), "the meters' idle count");
        assertEquals(stats.creations(), stats.disposals());
        assertEquals(engine.factoryCalls.get(), engine.created.size());
        for (CompletableFuture<Handle<Session>> future : futures) {
            assertTrue(future.isDone(), "every future settles");
        }
    }

    /**
     * At rest, with every handle closed and what was pending applied, each object at count 0 is in
     * the idle cache (which the lazy tier can get wrong: an object marked cached that the cache let
     * go of idles outside the bound for good). The cache's due maintenance runs first, and the
     * evictions it queues are applied, so expired entries are not counted against it.
     */
    private void assertIdleObjectsAreCached() {
        pool.flush();
        pool.core().control().cachedCount(); // runs the cache's due maintenance, queueing evictions
        pool.flush();
        long cached = pool.core().control().cachedCount();
        assertEquals(
                pool.stats().idle(), cached, () -> "at rest, every idle object is in the idle cache: " + pool.stats());
        if (bounded) { // and every permit that no object holds is free: none lost, none made up
            PoolStats stats = pool.stats();
            assertEquals(
                    maxObjects - stats.live() - stats.idle(),
                    pool.core().readings().freePermitsNow(),
                    () -> "at rest, every permit no object holds is free: " + pool.stats());
        }
    }

    /** One thread's operations and the handles it holds. */
    private final class ThreadRun {
        private final int id;
        private final Random random;
        private final List<Handle<Session>> held = new ArrayList<>();
        private final Deque<Attachment> scopes = new ArrayDeque<>();

        ThreadRun(int id, Random random) {
            this.id = id;
            this.random = random;
        }

        Void run() throws Exception {
            for (int step = 0; step < steps; step++) {
                if (id == closingThread && step == closingStep) {
                    trace.add(id + ": pool.close() at depth " + scopes.size());
                    pool.close();
                }
                step();
            }
            while (!held.isEmpty()) {
                close(held.remove(held.size() - 1));
            }
            while (!scopes.isEmpty()) {
                scopes.pop().close();
            }
            return null;
        }

        private void step() throws Exception {
            int choice = random.nextInt(100);
            if (choice < 12 && scopes.size() < 2) {
                attach();
            } else if (choice < 24 && !scopes.isEmpty()) {
                scopes.pop().close();
            } else if (choice < 48 && !scopes.isEmpty()) {
                acquire(KEYS[random.nextInt(KEYS.length)]);
            } else if (choice < 54 && scopes.isEmpty()) {
                acquireAsync(KEYS[random.nextInt(KEYS.length)]);
            } else if (choice < 62 && !held.isEmpty()) {
                Handle<Session> source = held.get(random.nextInt(held.size()));
                Handle<Session> copy = source.share();
                assertSame(source.get(), copy.get(), "share returns the same object");
                hold(copy);
            } else if (choice < 82 && !held.isEmpty()) {
                close(held.remove(random.nextInt(held.size())));
            } else if (choice < 88 && !held.isEmpty()) {
                handedOver.add(held.remove(random.nextInt(held.size()))); // another thread closes it
            } else if (choice < 94) {
                Handle<Session> adopted = handedOver.poll();
                if (adopted != null) {
                    held.add(adopted);
                }
            } else if (choice < 97 && expiring) {
                ticker.advance(EXPIRY); // idle objects expire at the cache's next write
            }
        }

        private void attach() {
            boolean exclusive = scopes.isEmpty() && mode == AttachMode.SHARED && random.nextInt(5) == 0;
            try {
                scopes.push(exclusive ? pool.stopTheWorld() : pool.attach());
            } catch (PoolClosedException closed) {
                assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
            }
        }

        private void acquire(String key) {
            Handle<Session> mine = heldFor(key);
            try {
                Handle<Session> handle = pool.acquire(key);
                if (mine != null) {
                    assertSame(mine.get(), handle.get(), "a key held by this thread has one object");
                }
                hold(handle);
            } catch (CapacityExhaustedException full) {
                assertTrue(bounded && mine == null, "no capacity, for a new object of a bounded pool");
            } catch (PoolClosedException closed) {
                assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
            }
        }

        private void acquireAsync(String key) throws Exception {
            Handle<Session> mine = heldFor(key);
            CancellationSource deadline = new CancellationSource();
            deadline.cancelAfter(Duration.ofMillis(1 + random.nextInt(20)));
            CompletableFuture<Handle<Session>> future;
            try {
                future = pool.acquireAsync(key, deadline.token()).toCompletableFuture();
            } catch (PoolClosedException closed) {
                assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                return;
            }
            futures.add(future);
            try {
                Handle<Session> handle = future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                if (mine != null) {
                    assertSame(mine.get(), handle.get(), "a key held by this thread has one object");
                }
                hold(handle);
            } catch (CancellationException timedOut) {
                assertTrue(deadline.isCancellationRequested());
            } catch (ExecutionException failed) {
                Throwable cause = failed.getCause();
                if (cause instanceof PoolClosedException) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                } else if (!(cause instanceof CancellationException && deadline.isCancellationRequested())) {
                    throw failed;
                }
            } finally {
                deadline.close();
            }
        }

        private Handle<Session> heldFor(String key) {
            for (Handle<Session> handle : held) {
                if (handle.get().key.equals(key)) {
                    return handle;
                }
            }
            return null;
        }

        private void hold(Handle<Session> handle) {
            handle.get().openHandles.incrementAndGet();
            held.add(handle);
        }

        private void close(Handle<Session> handle) {
            handle.get().openHandles.decrementAndGet();
            handle.close(); // attached: now; otherwise a pending decrement
        }
    }
}
