package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.github.benmanes.caffeine.cache.Scheduler;
import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;

/**
 * A long randomized soak of the pool against DESIGN.md's §5 invariants.
 *
 * <p>Each round builds a pool from its seed (attach mode; no idle cache, a size-bounded one, one
 * that expires on a ticker the threads move, or one that expires in a few real milliseconds;
 * capacity on or off; leak detection off, sampled or paranoid; drain delay and threshold) and
 * runs a few threads of seeded random operations on it: attaches (nested, and
 * {@code pool.stopTheWorld()} in {@code SHARED} mode), {@code detached()} sections, acquires, shares,
 * closes on and off attachment, handles handed to other threads or to a closer thread, handles
 * dropped for the leak detector, {@code acquireAsync} whose token times out or is cancelled or whose
 * future the caller cancels or times out, bad input, and in some rounds a {@code pool.close()} in
 * the middle.
 *
 * <p><b>During a round</b> the engine checks every disposal (attached, once, never while a thread
 * holds a handle to it) and every creation (never beyond {@code maxObjects}); each thread checks
 * that a handle it gets is the key's only live object, that exceptions are ones the contract allows
 * at that moment, and that no more acquires wait for capacity than there are threads. <b>At the
 * end</b> of a round: every future settled; once every handle is closed nothing is live or pending
 * and nobody waits; a fresh thread can attach and hold {@code maxObjects} new objects and not one
 * more; after {@code pool.close()} every object was disposed exactly once, {@code creations ==
 * disposals}, nothing is live, idle or pending; the listener heard of no failure and of exactly the
 * dropped handles as leaks.
 *
 * <p>The run lasts {@code -Drefpool.soak.seconds} (default 3, shared by the platform- and the
 * virtual-thread test; virtual threads need JDK 21). A failure names the round's seed, which
 * {@code -Drefpool.soak.seed=<seed>} replays (the seed fixes the pool and every thread's operations,
 * not their interleaving).
 */
class PoolSoakTest {
    static final String SECONDS_PROPERTY = "refpool.soak.seconds";
    static final String SEED_PROPERTY = "refpool.soak.seed";
    private static final double DEFAULT_SECONDS = 3;
    private static final String[] KEYS = {"k0", "k1", "k2", "k3", "k4", "k5"};
    private static final Duration TICK = Duration.ofSeconds(10);

    @Test
    void randomOperationsOnPlatformThreadsKeepEveryInvariant() throws Exception {
        soak("platform", runnable -> {
            Thread thread = new Thread(runnable);
            thread.setDaemon(true);
            return thread;
        });
    }

    @Test
    void randomOperationsOnVirtualThreadsKeepEveryInvariant() throws Exception {
        assumeTrue(virtualThreadsAvailable(), "virtual threads need JDK 21 or newer");
        soak("virtual", virtualThreadFactory());
    }

    private static boolean virtualThreadsAvailable() {
        return Runtime.version().feature() >= 21;
    }

    /** {@code Thread.ofVirtual().factory()}, looked up at run time: the tests compile for Java 17. */
    private static ThreadFactory virtualThreadFactory() throws ReflectiveOperationException {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        return (ThreadFactory)
                Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
    }

    private static void soak(String threadKind, ThreadFactory threads) throws Exception {
        String replay = System.getProperty(SEED_PROPERTY);
        if (replay != null) {
            runRound(Long.parseLong(replay), threadKind, threads);
            return;
        }
        double seconds = Double.parseDouble(System.getProperty(SECONDS_PROPERTY, String.valueOf(DEFAULT_SECONDS)));
        long share = (long) (seconds * 1e9 / (virtualThreadsAvailable() ? 2 : 1));
        long master = new Random().nextLong();
        Random seeds = new Random(master);
        long deadline = System.nanoTime() + share;
        int rounds = 0;
        do {
            runRound(seeds.nextLong(), threadKind, threads);
            rounds++;
        } while (System.nanoTime() < deadline);
        System.out.println("soak on " + threadKind + " threads: " + rounds + " rounds from master seed " + master);
    }

    private static void runRound(long seed, String threadKind, ThreadFactory threads) throws Exception {
        Round round = new Round(seed, threads);
        try {
            round.run();
        } catch (Throwable failure) {
            int from = Math.max(0, round.trace.size() - 80);
            List<String> tail;
            synchronized (round.trace) {
                tail = new ArrayList<>(round.trace.subList(from, round.trace.size()));
            }
            AssertionError error = new AssertionError(
                    "soak round on " + threadKind + " threads failed with seed " + seed + " (replay: -D" + SEED_PROPERTY
                            + "=" + seed + ")\n " + round.describe() + "\n last steps:\n  " + String.join("\n  ", tail),
                    failure);
            throw error;
        } finally {
            round.shutDown();
        }
    }

    /** How a round's idle cache behaves. */
    enum IdlePolicy {
        NONE,
        SIZE_BOUNDED,
        EXPIRING_ON_TICKER,
        EXPIRING_IN_REAL_TIME
    }

    /** One pool, a few threads of random operations, and the checks around them. */
    static final class Round {
        final long seed;
        final List<String> trace = Collections.synchronizedList(new ArrayList<>());
        private final ThreadFactory threadFactory;
        private final Random setup;
        private final AttachMode mode;
        private final IdlePolicy idlePolicy;
        private final int maxObjects; // 0: unbounded
        private final LeakDetection leaks;
        private final int threads;
        private final int steps;
        private final int closingThread; // -1: the pool is closed after the threads finish
        private final int closingStep;
        private final Engine engine = new Engine();
        private final ManualTicker ticker = new ManualTicker();
        private final RefPool<String, Session> pool;
        private final Queue<Handle<Session>> handedOver = new ConcurrentLinkedQueue<>();
        /** Stages that settle when the futures acquireAsync returned do; they do not keep the handles. */
        private final List<CompletableFuture<Void>> settled = new CopyOnWriteArrayList<>();

        private final Map<String, Set<Session>> sessionsByKey = new ConcurrentHashMap<>();
        private final AtomicInteger dropped = new AtomicInteger();
        /** Per key, the invalidations begun so far: counted before {@code invalidate} is called. */
        private final Map<String, AtomicInteger> invalidationsByKey = new ConcurrentHashMap<>();
        /** Per key, the invalidations that have returned: counted after {@code invalidate} returns. */
        private final Map<String, AtomicInteger> invalidationsEndedByKey = new ConcurrentHashMap<>();
        /** Each session's count of its key's invalidations that had returned before it was created. */
        private final Map<Session, Integer> invalidationsEndedAtCreation = new ConcurrentHashMap<>();

        private final ExecutorService closer;
        private final String config;

        Round(long seed, ThreadFactory threadFactory) {
            this.seed = seed;
            this.threadFactory = threadFactory;
            this.setup = new Random(seed);
            this.mode = AttachMode.values()[setup.nextInt(AttachMode.values().length)];
            this.idlePolicy = IdlePolicy.values()[setup.nextInt(IdlePolicy.values().length)];
            this.maxObjects = setup.nextBoolean() ? 2 + setup.nextInt(3) : 0;
            this.leaks = LeakDetection.values()[setup.nextInt(LeakDetection.values().length)];
            this.threads = 2 + setup.nextInt(3);
            this.steps = 100 + setup.nextInt(300);
            this.closingThread = setup.nextInt(5) == 0 ? setup.nextInt(threads) : -1;
            this.closingStep = setup.nextInt(steps);
            int drainThreshold = new int[] {1, 4, 1024}[setup.nextInt(3)];
            Duration drainDelay = Duration.ofMillis(1 + setup.nextInt(10));
            RefPool.Builder<String, Session> builder = engine.builder()
                    .attachMode(mode)
                    .leakDetection(leaks)
                    .drainThreshold(drainThreshold)
                    .drainDelay(drainDelay);
            if (maxObjects > 0) {
                builder.maxObjects(maxObjects);
            }
            boolean inlineMaintenance = setup.nextBoolean();
            int size = 1 + setup.nextInt(3);
            Duration expiry = Duration.ofMillis(2 + setup.nextInt(8));
            switch (idlePolicy) {
                case SIZE_BOUNDED:
                    builder.idle(cache -> {
                        cache.maximumSize(size);
                        if (inlineMaintenance) {
                            cache.executor(Runnable::run);
                        }
                    });
                    break;
                case EXPIRING_ON_TICKER:
                    builder.idle(cache -> cache.expireAfterAccess(TICK)
                            .ticker(ticker)
                            .scheduler(Scheduler.disabledScheduler())
                            .executor(Runnable::run));
                    break;
                case EXPIRING_IN_REAL_TIME:
                    builder.idle(cache -> cache.expireAfterWrite(expiry));
                    break;
                default:
                    break;
            }
            engine.beforeCreate = key -> {
                int existing = engine.created.size() - engine.disposed.size();
                if (maxObjects > 0 && existing >= maxObjects) {
                    engine.violations.add("a creation for '" + key + "' while " + existing + " objects exist, with "
                            + "maxObjects " + maxObjects);
                }
            };
            engine.afterCreate = session -> invalidationsEndedAtCreation.put(
                    session, invalidationsEnded(session.key).get());
            engine.replacedAtOnce = this::mayBeRetired;
            this.pool = engine.build(builder);
            this.closer = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, "soak-closer");
                thread.setDaemon(true);
                return thread;
            });
            this.config = mode + ", idle " + idlePolicy + (idlePolicy == IdlePolicy.SIZE_BOUNDED ? " " + size : "")
                    + (idlePolicy == IdlePolicy.EXPIRING_IN_REAL_TIME ? " " + expiry.toMillis() + " ms" : "")
                    + ", maxObjects " + (maxObjects == 0 ? "unbounded" : maxObjects) + ", leaks " + leaks + ", "
                    + threads + " threads x " + steps + " steps, drain delay " + drainDelay.toMillis()
                    + " ms, threshold " + drainThreshold + ", closed by thread " + closingThread + " at step "
                    + closingStep;
        }

        String describe() {
            return config;
        }

        /** Closes the pool, bounded: a thread of a failed round may have died attached, holding the gate. */
        void shutDown() throws InterruptedException {
            closer.shutdownNow();
            Thread closing = new Thread(pool::close, "soak-shutdown");
            closing.setDaemon(true);
            closing.start();
            closing.join(BOUND.toMillis());
        }

        void run() throws Exception {
            List<CompletableFuture<Void>> outcomes = new ArrayList<>();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                ThreadRun run = new ThreadRun(t, new Random(seed + 31L * (t + 1)));
                CompletableFuture<Void> outcome = new CompletableFuture<>();
                Thread worker = threadFactory.newThread(() -> {
                    try {
                        run.run();
                        outcome.complete(null);
                    } catch (Throwable failure) {
                        outcome.completeExceptionally(failure);
                    }
                });
                worker.setName("soak-" + t);
                outcomes.add(outcome);
                workers.add(worker);
            }
            workers.forEach(Thread::start);
            for (int t = 0; t < threads; t++) {
                try {
                    outcomes.get(t).get(BOUND.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException failed) {
                    throw new AssertionError("thread soak-" + t + " failed", failed.getCause());
                } catch (TimeoutException hung) {
                    throw new AssertionError("thread soak-" + t + " did not finish within " + BOUND + ": "
                            + TestKit.describeStack(workers.get(t)));
                }
            }
            Handle<Session> left;
            while ((left = handedOver.poll()) != null) {
                release(left);
                left.close(); // off attachment
            }
            closer.submit(() -> {}).get(BOUND.toSeconds(), TimeUnit.SECONDS); // the closer's queue is done
            // a future may settle on another thread just after the workers finished (a drain that
            // the close, or a close after it, handed to the drainer threads): settle means
            // eventually, within the bound, never "by now"
            for (CompletableFuture<Void> future : settled) {
                eventually("every future settles").until(future::isDone);
            }
            boolean closedDuringRun = pool.isClosed();
            if (leaks == LeakDetection.PARANOID && dropped.get() > 0) {
                eventually("every dropped handle is found by the leak detector")
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> {
                            System.gc();
                            return pool.stats().leaks() == dropped.get();
                        });
            }
            if (!closedDuringRun) {
                checkQuiescent();
            }
            pool.close();
            engine.assertNoViolations();
            eventually("every release is applied after close")
                    .until(() -> pool.stats().pendingDecrements() == 0);
            engine.awaitAllDisposedExactlyOnce();
            PoolStats stats = pool.stats();
            assertEquals(0, stats.live(), "nothing live after close: " + stats);
            assertEquals(0, stats.idle(), "nothing idle after close: " + stats);
            assertEquals(0, stats.capacityWaiters(), "nobody waits after close: " + stats);
            assertEquals(stats.creations(), stats.disposals(), "creations == disposals: " + stats);
            assertEquals(engine.factoryCalls.get(), engine.created.size(), "no factory call failed");
            checkErrors();
        }

        /**
         * With every handle closed, before close: nothing live or pending once attaches drain, nobody
         * in line, and a fresh thread can hold {@code maxObjects} new objects at once, not one more.
         */
        private void checkQuiescent() throws Exception {
            eventually("with every handle closed, nothing is live or pending").until(() -> {
                TestKeyedPoolFixtures.onOtherThread(() -> {
                    pool.attach().close(); // applies what is pending
                    return null;
                });
                PoolStats stats = pool.stats();
                return stats.live() == 0 && stats.pendingDecrements() == 0;
            });
            assertEquals(0, pool.stats().capacityWaiters(), "nobody waits for capacity: " + pool.stats());
            if (maxObjects == 0) {
                return;
            }
            TestKeyedPoolFixtures.onOtherThread(() -> {
                // acquireAsync, because an idle object that expires just now still holds its permit
                // until its disposal is applied; a lost permit never comes back and times this out
                List<Handle<Session>> probes = new ArrayList<>();
                for (int p = 0; p < maxObjects; p++) {
                    CompletableFuture<Handle<Session>> probe = pool.acquireAsync("probe-" + p, CancellationToken.none())
                            .toCompletableFuture();
                    try {
                        probes.add(probe.get(BOUND.toSeconds(), TimeUnit.SECONDS));
                    } catch (TimeoutException lost) {
                        probe.cancel(false);
                        throw new AssertionError("a capacity permit was lost: with nothing live, a fresh thread could"
                                + " hold only " + p + " of " + maxObjects + " new objects at once; " + pool.stats());
                    }
                }
                try (Attachment attached = pool.attach()) {
                    try {
                        pool.acquire("probe-beyond").close();
                        throw new AssertionError(
                                "a capacity permit was made up: " + (maxObjects + 1) + " objects were held at once");
                    } catch (CapacityExhaustedException expected) {
                        // the bound holds
                    }
                    probes.forEach(Handle::close);
                }
                return null;
            });
        }

        private void checkErrors() {
            for (PoolError error : engine.errors) {
                switch (error.kind()) {
                    case HANDLE_LEAKED:
                        break;
                    case HANDLES_OPEN_AT_CLOSE:
                        if (closingThread < 0) {
                            throw new AssertionError("a handle was still open when the pool closed: " + error);
                        }
                        break;
                    default:
                        throw new AssertionError("the error listener heard " + error, error.cause());
                }
            }
            assertEquals(
                    dropped.get(),
                    engine.errors(PoolError.Kind.HANDLE_LEAKED).size(),
                    "each dropped handle is reported as a leak, and nothing else is");
        }

        private ConditionFactory eventually(String what) {
            return Awaitility.await(what).atMost(BOUND).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2));
        }

        private AtomicInteger invalidations(String key) {
            return invalidationsByKey.computeIfAbsent(key, k -> new AtomicInteger());
        }

        private AtomicInteger invalidationsEnded(String key) {
            return invalidationsEndedByKey.computeIfAbsent(key, k -> new AtomicInteger());
        }

        /**
         * {@return whether {@code session} may have been retired by an invalidate}: one that had not
         * returned when the session was created has begun, so a successor may be live beside it while
         * it is still held
         */
        private boolean mayBeRetired(Session session) {
            Integer endedAtCreation = invalidationsEndedAtCreation.get(session);
            return endedAtCreation == null || invalidations(session.key).get() > endedAtCreation;
        }

        /** The test's record that a handle it held is closed (or dropped, or handed to the pool). */
        void release(Handle<Session> handle) {
            handle.get().openHandles.decrementAndGet();
        }

        /** One thread's operations and the handles it holds. */
        private final class ThreadRun {
            private final int id;
            private final Random random;
            private final List<Handle<Session>> held = new ArrayList<>();
            private final Deque<Attachment> scopes = new ArrayDeque<>();
            /** Inside a {@code detached()} section: attachments are open, the thread is not attached. */
            private boolean inDetachedSection;

            ThreadRun(int id, Random random) {
                this.id = id;
                this.random = random;
            }

            void run() throws Exception {
                for (int step = 0; step < steps; step++) {
                    if (id == closingThread && step == closingStep) {
                        trace.add(id + ": pool.close() at depth " + scopes.size());
                        pool.close();
                    }
                    step();
                    long waiters = pool.stats().capacityWaiters();
                    if (waiters > threads) {
                        throw new AssertionError(waiters + " acquires wait for capacity, with " + threads
                                + " threads that each wait for one at most: a waiter was left in line");
                    }
                }
                while (!held.isEmpty()) {
                    close(held.remove(held.size() - 1));
                }
                while (!scopes.isEmpty()) {
                    scopes.pop().close();
                }
            }

            private void step() throws Exception {
                int choice = random.nextInt(110);
                boolean attached = !scopes.isEmpty();
                if (choice < 10 && scopes.size() < 3) {
                    attach();
                } else if (choice < 20 && attached) {
                    trace.add(id + ": detach from depth " + scopes.size());
                    scopes.pop().close();
                } else if (choice < 40 && attached) {
                    acquire(KEYS[random.nextInt(KEYS.length)]);
                } else if (choice < 47 && !attached) {
                    acquireAsync(KEYS[random.nextInt(KEYS.length)]);
                } else if (choice < 50 && attached) {
                    detachedSection();
                } else if (choice < 58 && !held.isEmpty()) {
                    share(held.get(random.nextInt(held.size())));
                } else if (choice < 74 && !held.isEmpty()) {
                    close(held.remove(random.nextInt(held.size())));
                } else if (choice < 79 && !held.isEmpty()) {
                    Handle<Session> handle = held.remove(random.nextInt(held.size()));
                    trace.add(id + ": hands " + handle.get() + " over");
                    handedOver.add(handle); // another thread adopts and closes it
                } else if (choice < 85) {
                    Handle<Session> adopted = handedOver.poll();
                    if (adopted != null) {
                        trace.add(id + ": adopts " + adopted.get());
                        held.add(adopted);
                    }
                } else if (choice < 88 && !held.isEmpty()) {
                    Handle<Session> handle = held.remove(random.nextInt(held.size()));
                    trace.add(id + ": gives " + handle.get() + " to the closer thread");
                    closer.execute(() -> {
                        release(handle);
                        handle.close();
                    });
                } else if (choice < 90 && !held.isEmpty() && leaks == LeakDetection.PARANOID) {
                    Handle<Session> handle = held.remove(random.nextInt(held.size()));
                    trace.add(id + ": drops a handle to " + handle.get());
                    release(handle);
                    dropped.incrementAndGet(); // the leak detector releases it once it is collected
                } else if (choice < 92 && idlePolicy == IdlePolicy.EXPIRING_ON_TICKER) {
                    ticker.advance(TICK); // idle objects expire at the cache's next write
                } else if (choice < 95) {
                    badInput(attached);
                } else if (choice < 97) {
                    invalidate(KEYS[random.nextInt(KEYS.length)]);
                } else if (choice < 99) {
                    flush();
                } else if (choice < 103 && !attached) {
                    callAsync(KEYS[random.nextInt(KEYS.length)]);
                } else if (choice < 105 && !attached && !held.isEmpty()) {
                    exclusiveAsync(held.get(random.nextInt(held.size())));
                } else if (choice < 107 && scopes.size() < 3) {
                    attachWithin();
                } else if (choice < 110 && !attached) {
                    acquireAsyncWithin(KEYS[random.nextInt(KEYS.length)]);
                }
            }

            private void invalidate(String key) {
                invalidations(key).incrementAndGet();
                try {
                    boolean retired = pool.invalidate(key);
                    trace.add(id + ": invalidate('" + key + "') -> " + retired);
                } catch (PoolClosedException closed) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                } finally {
                    invalidationsEnded(key).incrementAndGet(); // a session created from here on is not retired by it
                }
            }

            private void flush() {
                try {
                    pool.flush();
                    trace.add(id + ": flush()");
                } catch (PoolClosedException closed) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                }
            }

            /**
             * callAsync, its token cancelled at once now and then and otherwise after a few
             * milliseconds (this thread may hold handles that another thread's wait for capacity
             * needs); the function checks it may use the object.
             */
            private void callAsync(String key) throws Exception {
                CancellationSource source = new CancellationSource();
                source.cancelAfter(Duration.ofMillis(1 + random.nextInt(20)));
                CompletableFuture<Session> future = pool.callAsync(key, source.token(), session -> {
                            if (session.isDisposed()) {
                                throw new AssertionError("callAsync ran on " + session + ", which is disposed");
                            }
                            return session;
                        })
                        .toCompletableFuture();
                if (random.nextInt(3) == 0) {
                    source.cancel();
                }
                try {
                    Session session = future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                    trace.add(id + ": callAsync('" + key + "') ran on " + session);
                } catch (CancellationException cancelled) {
                    assertTrue(source.isCancellationRequested(), "a cancellation nobody asked for");
                } catch (ExecutionException failed) {
                    Throwable cause = failed.getCause();
                    if (cause instanceof PoolClosedException) {
                        assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                    } else if (cause instanceof CancellationException) {
                        assertTrue(source.isCancellationRequested(), "a cancellation nobody asked for: " + cause);
                    } else if (!(cause instanceof CapacityExhaustedException)) {
                        throw failed;
                    }
                } catch (TimeoutException hung) {
                    throw new AssertionError(
                            "callAsync('" + key + "') did not settle within " + BOUND + "; " + pool.stats());
                } finally {
                    source.close();
                }
            }

            /** The section of a held object, taken asynchronously and given back; the caller may give up first. */
            private void exclusiveAsync(Handle<Session> handle) throws Exception {
                CompletableFuture<io.refpool.sync.Guard> section =
                        handle.sectionAsync(CancellationToken.none()).toCompletableFuture();
                if (random.nextInt(3) == 0 && section.cancel(false)) {
                    trace.add(id + ": gave up on the section of " + handle.get());
                    return; // a grant that lands anyway is given back by the pool
                }
                try {
                    section.get(BOUND.toSeconds(), TimeUnit.SECONDS).close();
                    trace.add(id + ": held the section of " + handle.get());
                } catch (TimeoutException hung) {
                    throw new AssertionError("the section of " + handle.get() + " was not granted within " + BOUND);
                }
            }

            private void attachWithin() {
                try {
                    scopes.push(pool.attach(Duration.ofMillis(1 + random.nextInt(5))));
                    trace.add(id + ": attach(Duration) to depth " + scopes.size());
                } catch (io.refpool.sync.WaitTimeoutException timedOut) {
                    trace.add(id + ": attach(Duration) timed out");
                } catch (PoolClosedException closed) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                }
            }

            private void acquireAsyncWithin(String key) throws Exception {
                Handle<Session> mine = heldFor(key);
                CompletableFuture<Handle<Session>> future = pool.acquireAsync(
                                key, Duration.ofMillis(1 + random.nextInt(20)))
                        .toCompletableFuture();
                settled.add(future.handle((handle, failure) -> null));
                try {
                    hold(future.get(BOUND.toSeconds(), TimeUnit.SECONDS), mine, "acquireAsync(Duration)");
                } catch (ExecutionException failed) { // a timeout fails the stage; it does not cancel it
                    Throwable cause = failed.getCause();
                    if (cause instanceof PoolClosedException) {
                        assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                    } else if (!(cause instanceof io.refpool.sync.WaitTimeoutException)) {
                        throw failed;
                    }
                    trace.add(id + ": acquireAsync('" + key + "', Duration) ended: " + cause);
                } catch (TimeoutException hung) {
                    throw new AssertionError("acquireAsync('" + key + "', Duration) did not settle within " + BOUND);
                }
            }

            private void attach() {
                boolean exclusive = scopes.isEmpty() && mode == AttachMode.SHARED && random.nextInt(5) == 0;
                try {
                    scopes.push(exclusive ? pool.stopTheWorld() : pool.attach());
                    trace.add(id + ": " + (exclusive ? "exclusive()" : "attach") + " to depth " + scopes.size());
                } catch (PoolClosedException closed) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                }
            }

            private void detachedSection() {
                Attachment top = scopes.peek();
                trace.add(id + ": detached() section at depth " + scopes.size());
                inDetachedSection = true;
                try {
                    top.detached(() -> {
                        if (!held.isEmpty() && random.nextBoolean()) {
                            close(held.remove(random.nextInt(held.size()))); // off attachment: deferred
                        }
                        return null;
                    });
                } finally {
                    inDetachedSection = false;
                }
            }

            private void acquire(String key) {
                Handle<Session> mine = heldFor(key);
                try {
                    Handle<Session> handle = pool.acquire(key);
                    hold(handle, mine, "acquire");
                } catch (CapacityExhaustedException full) {
                    assertTrue(
                            maxObjects > 0 && (mine == null || mayBeRetired(mine.get())),
                            "no capacity, for a new object of a bounded pool");
                    trace.add(id + ": acquire('" + key + "') found no capacity");
                } catch (PoolClosedException closed) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                }
            }

            private void acquireAsync(String key) throws Exception {
                Handle<Session> mine = heldFor(key);
                CancellationSource source = new CancellationSource();
                int how = random.nextInt(4);
                int millis = 1 + random.nextInt(20);
                if (how == 0) {
                    source.cancelAfter(Duration.ofMillis(millis));
                }
                CompletableFuture<Handle<Session>> future;
                try {
                    future = pool.acquireAsync(key, source.token()).toCompletableFuture();
                } catch (PoolClosedException closed) {
                    assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                    source.close();
                    return;
                }
                settled.add(future.handle((handle, failure) -> null));
                switch (how) {
                    case 1:
                        future.orTimeout(millis, TimeUnit.MILLISECONDS); // the caller times its own future out
                        break;
                    case 2:
                        future.cancel(false); // the caller gives up at once
                        break;
                    case 3:
                        source.cancel(); // the token, after the call
                        break;
                    default:
                        break;
                }
                boolean gaveUp = how != 0 || source.isCancellationRequested();
                try {
                    Handle<Session> handle = future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
                    hold(handle, mine, "acquireAsync");
                } catch (CancellationException cancelled) {
                    assertTrue(gaveUp || source.isCancellationRequested(), "a cancellation nobody asked for");
                    trace.add(id + ": acquireAsync('" + key + "') cancelled");
                } catch (ExecutionException failed) {
                    Throwable cause = failed.getCause();
                    if (cause instanceof PoolClosedException) {
                        assertTrue(pool.isClosed(), "PoolClosedException from an open pool");
                    } else if (cause instanceof CancellationException || cause instanceof TimeoutException) {
                        assertTrue(
                                gaveUp || source.isCancellationRequested(),
                                "a cancellation nobody asked for: " + cause);
                    } else {
                        throw failed;
                    }
                    trace.add(id + ": acquireAsync('" + key + "') ended: " + cause);
                } catch (TimeoutException hung) {
                    throw new AssertionError(
                            "acquireAsync('" + key + "') did not settle within " + BOUND + "; " + pool.stats());
                } finally {
                    source.close();
                }
            }

            private void share(Handle<Session> source) {
                Handle<Session> copy = source.share();
                if (copy.get() != source.get()) {
                    throw new AssertionError("share() returned another object");
                }
                hold(copy, source, "share");
            }

            private void badInput(boolean attached) {
                try {
                    if (attached) {
                        pool.acquire(null);
                    } else {
                        pool.acquire(KEYS[0]);
                    }
                    throw new AssertionError("bad input was accepted: acquire("
                            + (attached ? "null" : "'" + KEYS[0] + "' unattached") + ")");
                } catch (NullPointerException | IllegalStateException expected) {
                    if (attached != expected instanceof NullPointerException) {
                        throw new AssertionError("bad input got the wrong exception", expected);
                    }
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

            /**
             * Takes a new handle: it must be to the object this thread already holds for the key, and
             * no other object of the key may have a handle open anywhere (one live object per key).
             */
            private void hold(Handle<Session> handle, Handle<Session> mine, String how) {
                Session session = handle.get();
                session.openHandles.incrementAndGet();
                held.add(handle);
                trace.add(id + ": " + how + " -> " + session);
                if (mine != null && mine.get() != session && !mayBeRetired(mine.get())) {
                    throw new AssertionError(how + " gave " + session + " while this thread holds " + mine.get());
                }
                if (session.isDisposed()) {
                    throw new AssertionError(how + " gave " + session + ", which is disposed");
                }
                Set<Session> sessions = sessionsByKey.computeIfAbsent(session.key, k -> ConcurrentHashMap.newKeySet());
                sessions.add(session);
                for (Session other : sessions) {
                    if (other != session
                            && other.openHandles.get() > 0
                            && !mayBeRetired(other)
                            && !mayBeRetired(session)) {
                        throw new AssertionError(how + " gave " + session + " while " + other + " of the same key has "
                                + other.openHandles.get() + " handle(s) open: two live objects for one key");
                    }
                }
            }

            private void close(Handle<Session> handle) {
                boolean attached = !scopes.isEmpty() && !inDetachedSection;
                trace.add(id + ": close " + handle.get() + (attached ? " attached" : " off attachment"));
                release(handle);
                handle.close();
            }
        }
    }
}
