package io.refpool.core;

import static io.refpool.core.TestFaults.describe;
import static io.refpool.core.TestFaults.factoryFailureShapeProblem;
import static io.refpool.core.TestFaults.involves;
import static io.refpool.core.TestFaults.site;
import static io.refpool.core.TestFaults.unwrapFuture;
import static org.junit.jupiter.api.Assertions.fail;

import com.github.benmanes.caffeine.cache.Scheduler;
import io.refpool.core.TestFaults.Callback;
import io.refpool.core.TestFaults.FaultEngine;
import io.refpool.core.TestFaults.FaultKey;
import io.refpool.core.TestFaults.FaultPlan;
import io.refpool.core.TestFaults.Kind;
import io.refpool.core.TestFaults.QueuedExecutor;
import io.refpool.core.TestFaults.Res;
import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A throw from any user callback, at any of its call sites, leaks nothing (DESIGN.md §5.6): no
 * reference, no capacity permit, no object; nothing stays stuck; and {@link Handle#close()} never
 * throws for it.
 *
 * <p><b>The scenario.</b> One fixed, single-threaded {@link Scenario} walks a pool through its
 * paths: attached acquire, share and close; a close off attachment applied by the drainer and by a
 * (nested) attach; revival from the idle cache; eviction for capacity, by size and by expiry (on a
 * ticker the test moves); an {@code acquireAsync} that waits for capacity and is served by a
 * disposal; waiters that give up (token, the caller's own {@code cancel}); a {@code pool.stopTheWorld()}
 * section; {@code call} of one key and of two, {@code invalidate} of a held and of an idle object,
 * a timed {@code acquireAsync}, {@code flush}, {@code callAsync} (its function moved off an inline
 * call executor to the pool's own thread), a timed attach and {@code clearIdle}; a double close; a
 * {@code pool.close()} with a handle still open, released afterwards.
 * Everything it starts finishes on its own threads before the next step: the drainer executor only
 * queues (the scenario runs the drainers at fixed points), the cache maintains itself on the writing
 * thread with its scheduler off, and the drain delay is long.
 *
 * <p><b>Every call site.</b> A clean run counts the calls of each callback (factory, disposer, the
 * key's {@code hashCode}/{@code equals}/{@code toString}, the cache's weigher, the error listener,
 * the drainer executor) and where each came from. Each parameterised test then replays the scenario
 * once per call {@code n} with call {@code n} throwing a {@code RuntimeException}, a sneakily thrown
 * checked exception or an {@code Error} (for the executor: {@code RejectedExecutionException}, a
 * {@code RuntimeException}, {@code OutOfMemoryError("unable to create native thread")}), across the
 * three attach modes, each with and without an idle cache, and the three leak-detection modes. The disposer throws
 * each kind at the first call from each call site (each path to it counted apart); the key's methods,
 * called over a hundred times a run, likewise, one kind per site and configuration in turn
 * ({@code -Drefpool.faults.everyCall=true} makes every one of their calls throw every kind).
 *
 * <p><b>What is checked after each fault.</b> Only the call that ran the callback may throw, and
 * only the fault; {@code Handle.close()} never throws. A factory failure reaches its acquirer
 * (unchecked as thrown; checked as {@code ObjectCreationException} with the cause, or, until that
 * class exists, in the cause chain). Once every handle is closed nothing is live or pending and
 * nobody waits for capacity; a fresh thread can attach and hold {@code maxObjects} new objects at
 * once, and not one more. After {@code pool.close()} every object ever created was disposed exactly
 * once, attached, never while the test held a handle to it; {@code creations == disposals}; nothing
 * live or idle; every future settled.
 *
 * <p>The last tests use real threads for what the scenario cannot pin down: a drainer executor that
 * fails while the drain is delayed or urgent, the leak detector's path, and waiters on a creation
 * that fails.
 */
class PoolFaultInjectionTest {
    /**
     * The bound of waits for what the scenario's own threads complete synchronously: a future the
     * step before completed, a gate nobody else holds.
     */
    private static final Duration SETTLE = Duration.ofMillis(500);
    /** The bound of one helper thread's work: a close off attachment, a drainer run, a probe. */
    private static final Duration HELPER_BOUND = Duration.ofSeconds(2);
    /** The bound of a whole scenario, which only hangs if its own thread blocks. */
    private static final Duration SCENARIO_BOUND = Duration.ofSeconds(10);
    /** The bound of a wait for a real drainer thread, whose drain delay is a few milliseconds. */
    private static final Duration DRAINER_BOUND = Duration.ofMillis(500);
    /**
     * The bound of a wait for the garbage collector and the leak detector's cleaner: generous, since
     * a machine loaded by another build collects and cleans slowly; the wait polls, so a passing
     * run does not wait for it.
     */
    private static final Duration GC_BOUND = Duration.ofSeconds(30);

    private static final Duration EXPIRY = Duration.ofMinutes(10);
    private static final int MAX_OBJECTS = 3;

    /** One pool configuration of the scenario. */
    record Config(AttachMode mode, LeakDetection leaks, boolean idleCache) {
        @Override
        public String toString() {
            return mode + "/" + leaks + "/" + (idleCache ? "idle cache" : "no idle cache");
        }
    }

    /** Every attach mode with and without an idle cache; the leak-detection modes take turns. */
    private static final List<Config> CONFIGS = List.of(
            new Config(AttachMode.GLOBAL, LeakDetection.OFF, true),
            new Config(AttachMode.SHARED, LeakDetection.OFF, false),
            new Config(AttachMode.PER_OBJECT, LeakDetection.OFF, true),
            new Config(AttachMode.GLOBAL, LeakDetection.PARANOID, false),
            new Config(AttachMode.SHARED, LeakDetection.PARANOID, true),
            new Config(AttachMode.PER_OBJECT, LeakDetection.PARANOID, false),
            new Config(AttachMode.GLOBAL, LeakDetection.SAMPLED, false),
            new Config(AttachMode.SHARED, LeakDetection.SAMPLED, true),
            new Config(AttachMode.PER_OBJECT, LeakDetection.SAMPLED, false));

    /**
     * {@code -Drefpool.faults.everyCall=true} makes every call of the disposer and the key's methods
     * throw each kind, as for the other callbacks (several minutes instead of half a minute).
     */
    private static final boolean EVERY_CALL = Boolean.getBoolean("refpool.faults.everyCall");

    /** The call counts of a clean run, per configuration. */
    private static final Map<Config, FaultPlan> CLEAN_COUNTS = new ConcurrentHashMap<>();

    private static final ExecutorService DRAINER_THREADS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "fault-test-drainer");
        thread.setDaemon(true);
        return thread;
    });

    @AfterAll
    static void stopDrainerThreads() {
        DRAINER_THREADS.shutdownNow();
    }

    // ------------------------------------------------------------------ the scenario, every call site

    static Stream<Config> configs() {
        return CONFIGS.stream();
    }

    private static FaultPlan cleanCounts(Config config) {
        return CLEAN_COUNTS.computeIfAbsent(config, c -> Scenario.play(c, FaultPlan.clean(), null).plan);
    }

    /**
     * Every (configuration, call, kind) of the factory, weigher, listener or executor, from the call
     * counts of a clean run: each of their calls (a handful, each in another state of the pool)
     * throws each kind.
     */
    private static Stream<Arguments> faults(Callback target, List<Kind> kinds) {
        return CONFIGS.stream()
                .flatMap(config -> IntStream.rangeClosed(1, cleanCounts(config).calls(target))
                        .boxed()
                        .flatMap(n -> kinds.stream().map(kind -> Arguments.of(config, n, kind))));
    }

    /**
     * Every (configuration, site, kind) of the disposer: the first call from each call site (each
     * path to it counted apart: an attached release, a drain, an eviction for capacity, a disposal
     * for a waiter, close) throws each kind.
     */
    static Stream<Arguments> disposerFaults() {
        if (EVERY_CALL) {
            return faults(Callback.DISPOSER, Kind.CALLBACK_KINDS);
        }
        return CONFIGS.stream().flatMap(config -> cleanCounts(config).firstCallPerSite(Callback.DISPOSER).stream()
                .flatMap(n -> Kind.CALLBACK_KINDS.stream().map(kind -> Arguments.of(config, n, kind))));
    }

    /**
     * The key's methods, which the pool calls over a hundred times a scenario: in each configuration,
     * the first call from each call site (each path to it counted apart) throws, the kinds taking
     * turns over the sites and configurations, so every site throws once per configuration and most
     * sites, reached in several configurations, throw each kind.
     */
    private static Stream<Arguments> keyFaults(Callback target) {
        if (EVERY_CALL) {
            return faults(target, Kind.CALLBACK_KINDS);
        }
        List<Arguments> cases = new ArrayList<>();
        for (int c = 0; c < CONFIGS.size(); c++) {
            List<Integer> firstCalls = cleanCounts(CONFIGS.get(c)).firstCallPerSite(target);
            for (int site = 0; site < firstCalls.size(); site++) {
                Kind kind = Kind.CALLBACK_KINDS.get((site + c) % Kind.CALLBACK_KINDS.size());
                cases.add(Arguments.of(CONFIGS.get(c), firstCalls.get(site), kind));
            }
        }
        return cases.stream();
    }

    static Stream<Arguments> factoryFaults() {
        return faults(Callback.FACTORY, Kind.CALLBACK_KINDS);
    }

    static Stream<Arguments> keyHashCodeFaults() {
        return keyFaults(Callback.KEY_HASH_CODE);
    }

    static Stream<Arguments> keyEqualsFaults() {
        return keyFaults(Callback.KEY_EQUALS);
    }

    static Stream<Arguments> keyToStringFaults() {
        return keyFaults(Callback.KEY_TO_STRING);
    }

    static Stream<Arguments> weigherFaults() {
        return faults(Callback.WEIGHER, Kind.CALLBACK_KINDS);
    }

    static Stream<Arguments> listenerFaults() {
        return faults(Callback.LISTENER, Kind.CALLBACK_KINDS);
    }

    static Stream<Arguments> executorFaults() {
        return faults(Callback.EXECUTOR, Kind.EXECUTOR_KINDS);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void withoutAFaultTheScenarioKeepsEveryInvariant(Config config) {
        Scenario.play(config, FaultPlan.clean(), null).assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from factory call #{1}")
    @MethodSource("factoryFaults")
    void aFailingFactoryReachesItsAcquirerAndLeaksNothing(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.FACTORY, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from disposer call #{1}")
    @MethodSource("disposerFaults")
    void aFailingDisposerNeverEscapesHandleCloseAndLeaksNothing(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.DISPOSER, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from key hashCode call #{1}")
    @MethodSource("keyHashCodeFaults")
    void aThrowingKeyHashCodeLeaksNothingAndNeverEscapesHandleClose(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.KEY_HASH_CODE, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from key equals call #{1}")
    @MethodSource("keyEqualsFaults")
    void aThrowingKeyEqualsLeaksNothingAndNeverEscapesHandleClose(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.KEY_EQUALS, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from key toString call #{1}")
    @MethodSource("keyToStringFaults")
    void aThrowingKeyToStringLeaksNothingAndNeverEscapesHandleClose(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.KEY_TO_STRING, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from weigher call #{1}")
    @MethodSource("weigherFaults")
    void aThrowingWeigherNeverEscapesHandleCloseAndStrandsNoPermit(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.WEIGHER, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from error listener call #{1}")
    @MethodSource("listenerFaults")
    void aThrowingErrorListenerLeaksNothing(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.LISTENER, n, kind), null)
                .assertKept();
    }

    @ParameterizedTest(name = "{0}: {2} from executor call #{1}")
    @MethodSource("executorFaults")
    void aFailingDrainerExecutorNeverEscapesHandleCloseAndLeavesNoReleaseBehind(Config config, int n, Kind kind) {
        Scenario.play(config, FaultPlan.failing(Callback.EXECUTOR, n, kind), null)
                .assertKept();
    }

    /** Factory, disposer and executor faults, each reported to a listener that throws as well. */
    static Stream<Arguments> faultsReportedToAThrowingListener() {
        List<Arguments> cases = new ArrayList<>();
        for (Config config : List.of(CONFIGS.get(0), CONFIGS.get(3))) {
            FaultPlan counts = cleanCounts(config);
            int variant = 0;
            for (Callback target : List.of(Callback.FACTORY, Callback.DISPOSER, Callback.EXECUTOR)) {
                Kind kind = target == Callback.EXECUTOR ? Kind.REJECTED : Kind.RUNTIME;
                for (int n = 1; n <= counts.calls(target); n++) {
                    Kind listenerKind = Kind.CALLBACK_KINDS.get(variant++ % Kind.CALLBACK_KINDS.size());
                    cases.add(Arguments.of(config, target, n, kind, listenerKind));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}: {3} from {1} call #{2}, the listener throwing {4}")
    @MethodSource("faultsReportedToAThrowingListener")
    void aListenerThrowingOnEveryReportTurnsNoReportedFaultIntoAThrow(
            Config config, Callback target, int n, Kind kind, Kind listenerKind) {
        Scenario.play(config, FaultPlan.failing(target, n, kind), listenerKind).assertKept();
    }

    /**
     * The scenario: a fixed walk through the pool's paths on one thread, with helpers for closes off
     * attachment and drainer runs, recording every deviation from the contract instead of stopping
     * at the first.
     */
    static final class Scenario {
        final Config config;
        final FaultPlan plan;
        final FaultEngine engine;
        final ManualTicker ticker = new ManualTicker();
        final QueuedExecutor drainers;
        final RefPool<FaultKey, Res> pool;
        final List<String> violations = new CopyOnWriteArrayList<>();
        final List<String> trace = new CopyOnWriteArrayList<>();
        final List<Handle<Res>> held = new CopyOnWriteArrayList<>();
        final List<Pending> futures = new CopyOnWriteArrayList<>();
        /** What acquirers saw: exceptions thrown by acquire, failures of acquireAsync's futures. */
        final List<Throwable> acquirerFailures = new CopyOnWriteArrayList<>();

        private Throwable scenarioFailure;

        /** A future of acquireAsync and the dependent that recorded its outcome. */
        record Pending(String name, CompletableFuture<Handle<Res>> future, CompletableFuture<Void> recorded) {}

        /** Thrown to end a scenario whose pool hung: later steps would only wait too. */
        static final class Hung extends RuntimeException {
            private static final long serialVersionUID = 1L;

            Hung() {
                super(null, null, false, false);
            }
        }

        private Scenario(Config config, FaultPlan plan, Kind listenerAlwaysThrows) {
            this.config = config;
            this.plan = plan;
            this.engine = new FaultEngine(plan);
            this.engine.listenerAlwaysThrows = listenerAlwaysThrows;
            this.drainers = new QueuedExecutor(plan);
            RefPool.Builder<FaultKey, Res> builder = RefPool.<FaultKey, Res>builder(engine::create)
                    .disposer(engine::dispose)
                    .errorListener(engine::onError)
                    .attachMode(config.mode())
                    .leakDetection(config.leaks())
                    .maxObjects(MAX_OBJECTS)
                    .executor(drainers)
                    .callExecutor(Runnable::run) // runs inline, so the pool moves each function to a thread of its own
                    .drainThreshold(1) // every close off attachment hands a drainer to the executor
                    .drainDelay(Duration.ofSeconds(5)); // evictions' delayed drainer never fires in a run
            if (config.idleCache()) {
                builder.idle(cache -> cache.maximumWeight(2)
                        .weigher((key, value) -> engine.weigh((Res) value))
                        .expireAfterWrite(EXPIRY)
                        .ticker(ticker)
                        .scheduler(Scheduler.disabledScheduler())
                        .executor(Runnable::run));
            }
            this.pool = builder.build();
            engine.pool = pool;
        }

        /** Plays the scenario on a thread of its own, bounded; {@return the finished scenario} */
        static Scenario play(Config config, FaultPlan plan, Kind listenerAlwaysThrows) {
            Scenario scenario = new Scenario(config, plan, listenerAlwaysThrows);
            Thread thread = new Thread(scenario::playHere, "fault-scenario");
            thread.setDaemon(true);
            thread.start();
            try {
                thread.join(SCENARIO_BOUND.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            if (thread.isAlive()) {
                scenario.violations.add(
                        "the scenario thread hung for " + SCENARIO_BOUND + ": " + TestKit.describeStack(thread));
            }
            plan.quiet(true); // a timer that fires after the run counts for nothing
            if (plan.target() != null && !plan.fired() && config.leaks() != LeakDetection.SAMPLED) {
                // only sampling (which handles carry a site) varies from run to run
                scenario.violations.add("the planned fault never fired: the scenario made fewer calls than its"
                        + " clean run counted, so this case tested nothing");
            }
            return scenario;
        }

        private void playHere() {
            try {
                walk();
                windDown();
                probeQuietly();
                closing();
                finalChecksQuietly();
            } catch (Hung hung) {
                trace.add("(scenario ended: the pool hung)");
            } catch (Throwable t) {
                scenarioFailure = t;
                violations.add("the scenario itself failed: " + describe(t));
            }
        }

        /** The walk through the pool's paths. Steps after a failed one skip what it did not make. */
        private void walk() throws Exception {
            Attachment outer = attach("attach");
            Handle<Res> a1 = acquire("a"); // creates a
            Handle<Res> a2 = acquire("a"); // an equal key finds the live a
            Handle<Res> a3 = share(a1);
            Attachment nested = attach("nested attach");
            Handle<Res> b1 = acquire("b");
            detach(nested, "nested");
            closeHere(a3);
            closeHere(a2);
            detach(outer, "outer");
            closeOff(a1); // deferred; a drainer is handed to the executor
            pumpDrainers(); // the drainer takes a to zero: it idles, or is disposed

            Attachment second = attach("attach");
            Handle<Res> a4 = acquire("a"); // revives the idle a, or creates it anew
            closeHere(b1); // b idles, or is disposed
            Handle<Res> c1 = acquire("c");
            Handle<Res> d1 = acquire("d"); // the third object: an idle b is evicted for capacity
            detach(second, "second");

            Pending e = acquireAsync("e", CancellationToken.none()); // a, c, d live: waits for capacity
            Attachment third = attach("attach");
            closeHere(c1); // with a waiter in line, c is disposed and its permit goes to the waiter
            detach(third, "third"); // in GLOBAL mode the waiter attaches now, and creates e
            settle(e);

            Attachment fourth = attach("attach");
            closeHere(d1); // d idles, or is disposed
            ticker.advance(EXPIRY.plusSeconds(1));
            closeHere(a4); // a idles; the cache's write expires d, whose eviction is queued
            detach(fourth, "fourth"); // applies the eviction
            closeOff(handleOf(e)); // deferred; a drainer is handed to the executor
            Attachment fifth = attach("attach");
            Attachment fifthNested = attach("nested attach");
            detach(fifthNested, "nested");
            detach(fifth, "fifth"); // the attach applied the release; the drainer finds nothing
            pumpDrainers();

            Attachment sixth = attach("attach");
            Handle<Res> f1 = acquire("f");
            Handle<Res> g1 = acquire("g"); // idle objects are evicted for capacity
            Handle<Res> h1 = acquire("h");
            detach(sixth, "sixth");
            CancellationSource giveUp = new CancellationSource();
            Pending i = acquireAsync("i", giveUp.token()); // waits for capacity
            Pending j = acquireAsync("j", CancellationToken.none()); // waits behind i
            step("cancel i's token", giveUp::cancel);
            if (j != null) {
                j.future().cancel(false); // the caller gives up on its own future
            }
            settle(i);
            settle(j);

            Attachment stopTheWorld = exclusive();
            closeHere(f1); // nobody waits: f idles, or is disposed
            Handle<Res> f2 = acquire("f");
            closeHere(f2);
            detach(stopTheWorld, "exclusive");
            Attachment seventh = attach("attach");
            closeHere(g1);
            closeHere(h1); // with an idle cache of weight 2, one idle object is evicted for size
            detach(seventh, "seventh");

            // the closure API, invalidate, flush and the timed waits
            acquiring("call('k')", () -> pool.call(new FaultKey("k", plan), res -> res));
            acquiring("call('k', 'f')", () -> pool.call(new FaultKey("k", plan), new FaultKey("f", plan), (x, y) -> x));
            Attachment eighth = attach("attach");
            Handle<Res> k1 = acquire("k");
            step("invalidate('k') while held", () -> pool.invalidate(new FaultKey("k", plan)));
            closeHere(k1); // the retired k goes at count 0
            detach(eighth, "eighth");
            step("invalidate('f') while idle", () -> pool.invalidate(new FaultKey("f", plan)));
            Pending m = acquireAsync("m", Duration.ofSeconds(5));
            settle(m);
            closeOff(handleOf(m)); // deferred; flush applies it
            step("flush()", pool::flush);
            pumpDrainers();
            callAsync("n");
            Attachment timed = attach("attach(Duration)", token -> pool.attach(SETTLE));
            detach(timed, "timed");
            step("clearIdle()", pool::clearIdle);
            warmUp("w"); // made on the executor with no gate held, published, then idled
        }

        /**
         * {@code warmUp} of {@code key} (a pool with an idle cache only): its task runs on a helper
         * thread as the executor's, then the drainer its release handed over; the stage must be
         * settled by then.
         */
        private void warmUp(String key) throws Exception {
            if (!config.idleCache()) {
                return; // refused without a cache, at the call
            }
            String name = "warmUp('" + key + "')";
            CompletableFuture<Integer> stage;
            try {
                stage = pool.warmUp(List.of(new FaultKey(key, plan)), CancellationToken.none())
                        .toCompletableFuture();
            } catch (Throwable t) {
                thrown(name, t);
                return;
            }
            pumpDrainers(); // the warm-up
            pumpDrainers(); // a drainer its release handed to the executor
            if (!stage.isDone()) {
                violations.add(name + " did not settle once its task ran; " + pool.stats());
                throw new Hung();
            }
            if (stage.isCompletedExceptionally()) {
                Throwable failure = unwrapFuture(stage.handle((made, t) -> t).join());
                acquirerFailures.add(failure);
                thrown(name, failure);
            } else {
                trace.add(name + " -> " + stage.join());
            }
        }

        /** A step that acquires, and so may see the factory's failure (recorded as reaching an acquirer). */
        private void acquiring(String name, Action action) {
            try {
                action.run();
                trace.add(name);
            } catch (Hung hung) {
                throw hung;
            } catch (Throwable t) {
                acquirerFailures.add(t);
                thrown(name, t);
            }
        }

        /** {@code callAsync} of {@code key}, settled within {@link #SETTLE}; its function returns at once. */
        private void callAsync(String key) {
            String name = "callAsync('" + key + "')";
            CompletableFuture<Res> future;
            try {
                future = pool.callAsync(new FaultKey(key, plan), CancellationToken.none(), res -> res)
                        .toCompletableFuture();
            } catch (Throwable t) {
                acquirerFailures.add(t);
                thrown(name, t);
                return;
            }
            try {
                Awaitility.await()
                        .atMost(SETTLE)
                        .pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(1))
                        .until(future::isDone);
            } catch (ConditionTimeoutException stuck) {
                violations.add(name + " did not settle within " + SETTLE + "; " + pool.stats());
                throw new Hung();
            }
            if (future.isCompletedExceptionally()) {
                Throwable failure = unwrapFuture(future.handle((value, t) -> t).join());
                acquirerFailures.add(failure);
                thrown(name, failure);
            } else {
                trace.add(name + " -> " + future.join());
            }
        }

        /** Closes what is still held (after faults), attached, and runs the drainers. */
        private void windDown() throws Exception {
            Attachment attached = attach("wind-down attach");
            for (Handle<Res> handle : new ArrayList<>(held)) {
                closeHere(handle);
            }
            detach(attached, "wind-down");
            pumpDrainers();
        }

        /**
         * With every handle closed: nothing live or pending, nobody in line, and a fresh thread can
         * attach and hold exactly {@code maxObjects} new objects at once. The plan is quiet meanwhile.
         */
        private void probeQuietly() throws Exception {
            plan.quiet(true);
            try {
                settleAll();
                PoolStats stats = pool.stats();
                if (stats.live() != 0) {
                    violations.add("with every handle closed, " + stats.live() + " object(s) are still live:"
                            + " a reference leaked; " + stats);
                }
                if (stats.pendingDecrements() != 0) {
                    violations.add("with every handle closed and the queue drained, " + stats.pendingDecrements()
                            + " release(s) are still pending; " + stats);
                }
                if (stats.capacityWaiters() != 0) {
                    violations.add("with every future settled, " + stats.capacityWaiters()
                            + " acquire(s) still wait for capacity; " + stats);
                }
                helper("the capacity probe", () -> {
                    List<Handle<Res>> probes = new ArrayList<>();
                    Attachment probing = attach("the capacity probe's attach");
                    if (probing == null) {
                        return;
                    }
                    try (Attachment attached = probing) {
                        for (int p = 0; p < MAX_OBJECTS; p++) {
                            try {
                                probes.add(pool.acquire(new FaultKey("probe-" + p, plan)));
                            } catch (CapacityExhaustedException full) {
                                violations.add(
                                        "a capacity permit was lost: with nothing live, a fresh thread could hold"
                                                + " only " + p + " of " + MAX_OBJECTS + " new objects at once; "
                                                + pool.stats());
                                break;
                            }
                        }
                        if (probes.size() == MAX_OBJECTS) {
                            try {
                                pool.acquire(new FaultKey("probe-beyond", plan)).close();
                                violations.add("a capacity permit was made up: " + (MAX_OBJECTS + 1)
                                        + " objects were held at once");
                            } catch (CapacityExhaustedException expected) {
                                // the bound holds
                            }
                        }
                        for (Handle<Res> probe : probes) {
                            probe.close();
                        }
                    }
                });
            } finally {
                plan.quiet(false);
            }
        }

        /** A double close, then {@code pool.close()} with a handle open, released afterwards. */
        private void closing() throws Exception {
            Attachment last = attach("attach");
            Handle<Res> z = acquire("z");
            Handle<Res> y = acquire("y");
            Handle<Res> y2 = share(y);
            closeHere(y2);
            closeAgain(y2); // reported under PARANOID; does nothing
            closeHere(y);
            detach(last, "last");
            helper("pool.close()", () -> step("pool.close()", pool::close));
            closeOff(z); // after close: a drainer disposes z
            pumpDrainers();
        }

        private void finalChecksQuietly() throws Exception {
            plan.quiet(true);
            pumpDrainers();
            settleAll();
            for (Res res : engine.created) {
                int disposals = res.disposals.get();
                if (disposals != 1) {
                    violations.add(res + " was disposed " + disposals + " times by the end (after every handle was"
                            + " closed and pool.close() returned)");
                }
            }
            violations.addAll(engine.violations);
            PoolStats stats = pool.stats();
            if (stats.live() != 0 || stats.idle() != 0 || stats.pendingDecrements() != 0) {
                violations.add("after close, stats() still counts objects or releases: " + stats);
            }
            if (stats.capacityWaiters() != 0) {
                violations.add("after close, acquires still wait for capacity: " + stats);
            }
            if (stats.creations() != stats.disposals()) {
                violations.add("after close, creations != disposals: " + stats);
            }
            Throwable fault = plan.injected;
            if (fault != null && plan.target() == Callback.FACTORY) {
                boolean reached = false;
                for (Throwable seen : acquirerFailures) {
                    if (involves(seen, fault)) {
                        reached = true;
                        String problem = factoryFailureShapeProblem(seen, fault);
                        if (problem != null) {
                            violations.add(problem);
                        }
                    }
                }
                if (!reached) {
                    violations.add("the factory's failure reached no acquirer");
                }
            }
            if (fault != null && plan.target() == Callback.DISPOSER) {
                boolean reported = engine.errors(PoolError.Kind.DISPOSER_FAILED).stream()
                        .anyMatch(error -> involves(error.cause(), fault));
                if (!reported) {
                    violations.add("the disposer's failure was not reported to the error listener as DISPOSER_FAILED");
                }
            }
        }

        void assertKept() {
            if (violations.isEmpty()) {
                return;
            }
            int from = Math.max(0, trace.size() - 120); // a whole scenario
            AssertionError failure = new AssertionError(config + ", " + plan
                    + (plan.fired() ? " (thrown on " + plan.injectedOn + " at " + site(plan.injected) + ")" : "")
                    + ":\n - " + String.join("\n - ", violations)
                    + "\n steps:\n   " + String.join("\n   ", trace.subList(from, trace.size())));
            if (plan.injected != null) {
                failure.addSuppressed(plan.injected);
            }
            if (scenarioFailure != null) {
                failure.addSuppressed(scenarioFailure);
            }
            throw failure;
        }

        // -------------------------------------------------------------- steps

        @FunctionalInterface
        interface Action {
            void run() throws Throwable;
        }

        /** Runs a call that may throw the injected fault, and only that. */
        private void step(String name, Action action) {
            try {
                action.run();
                trace.add(name);
            } catch (Hung hung) {
                throw hung;
            } catch (Throwable t) {
                thrown(name, t);
            }
        }

        private void thrown(String name, Throwable t) {
            if (involves(t, plan.injected)) {
                trace.add(name + " threw the injected fault" + (t == plan.injected ? "" : " in " + describe(t)));
            } else {
                trace.add(name + " threw " + describe(t));
                violations.add(name + " threw " + describe(t));
            }
        }

        private Attachment attach(String name) {
            return attach(name, pool::attach);
        }

        /** {@code pool.stopTheWorld()}, through the pool's implementation for a bounded wait. */
        private Attachment exclusive() {
            return attach("exclusive()", token -> pool.core().stopTheWorld(token));
        }

        /**
         * Attaches, waiting at most {@link #SETTLE}: nobody else holds the gate when the scenario
         * attaches, so a longer wait means a thread kept it after a fault.
         */
        private Attachment attach(String name, Function<CancellationToken, Attachment> attach) {
            CancellationSource deadline = new CancellationSource();
            deadline.cancelAfter(SETTLE);
            try {
                Attachment attached = attach.apply(deadline.token());
                trace.add(name);
                return attached;
            } catch (CancellationException timedOut) {
                if (deadline.isCancellationRequested()) {
                    violations.add(name + " waited " + SETTLE + " for a gate that no thread of the scenario holds: a"
                            + " thread kept it after a fault; " + pool.stats());
                    throw new Hung();
                }
                thrown(name, timedOut);
                return null;
            } catch (Throwable t) {
                thrown(name, t);
                return null;
            } finally {
                deadline.close();
            }
        }

        private void detach(Attachment attached, String name) {
            if (attached != null) {
                step("close the " + name + " attachment", attached::close);
            }
        }

        private Handle<Res> acquire(String key) {
            String name = "acquire('" + key + "')";
            try {
                Handle<Res> handle = pool.acquire(new FaultKey(key, plan));
                hold(handle);
                trace.add(name + " -> " + handle.get());
                return handle;
            } catch (CapacityExhaustedException full) {
                long objectsHeld = held.stream().map(Handle::get).distinct().count();
                if (objectsHeld >= MAX_OBJECTS) {
                    trace.add(name + " found the pool full (the test holds " + objectsHeld + " objects)");
                } else {
                    trace.add(name + " threw " + describe(full));
                    violations.add(name + " threw CapacityExhaustedException while the test held handles to only "
                            + objectsHeld + " of " + MAX_OBJECTS + " objects and nothing was pending: a permit was"
                            + " lost; " + pool.stats());
                }
                return null;
            } catch (Throwable t) {
                acquirerFailures.add(t);
                thrown(name, t);
                return null;
            }
        }

        private Handle<Res> share(Handle<Res> source) {
            if (source == null) {
                return null;
            }
            try {
                Handle<Res> copy = source.share();
                hold(copy);
                trace.add("share " + copy.get());
                return copy;
            } catch (Throwable t) {
                thrown("share()", t);
                return null;
            }
        }

        private void hold(Handle<Res> handle) {
            handle.get().openHandles.incrementAndGet();
            held.add(handle);
        }

        private Pending acquireAsync(String key, CancellationToken token) {
            return acquireAsync(key, k -> pool.acquireAsync(k, token));
        }

        private Pending acquireAsync(String key, Duration timeout) {
            return acquireAsync(key, k -> pool.acquireAsync(k, timeout));
        }

        private Pending acquireAsync(
                String key, Function<FaultKey, java.util.concurrent.CompletionStage<Handle<Res>>> acquire) {
            String name = "acquireAsync('" + key + "')";
            CompletableFuture<Handle<Res>> future;
            try {
                future = acquire.apply(new FaultKey(key, plan)).toCompletableFuture();
            } catch (Throwable t) {
                acquirerFailures.add(t);
                thrown(name, t);
                return null;
            }
            trace.add(name);
            CompletableFuture<Void> recorded = future.handle((handle, failure) -> {
                if (handle != null) {
                    hold(handle);
                    trace.add(name + " completed -> " + handle.get());
                } else if (!(unwrapFuture(failure) instanceof CancellationException)) {
                    acquirerFailures.add(failure);
                    thrown(name + "'s future", unwrapFuture(failure));
                } else {
                    trace.add(name + " cancelled");
                }
                return null;
            });
            Pending pending = new Pending(name, future, recorded);
            futures.add(pending);
            return pending;
        }

        private Handle<Res> handleOf(Pending pending) {
            if (pending == null
                    || !pending.future().isDone()
                    || pending.future().isCompletedExceptionally()) {
                return null;
            }
            Handle<Res> handle = pending.future().join();
            return held.contains(handle) ? handle : null;
        }

        private void settle(Pending pending) {
            if (pending == null || pending.recorded().isDone()) {
                return;
            }
            try {
                Awaitility.await()
                        .atMost(SETTLE)
                        .pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(1))
                        .until(pending.recorded()::isDone);
            } catch (ConditionTimeoutException stuck) {
                violations.add(pending.name() + "'s future did not settle within " + SETTLE + "; " + pool.stats());
                throw new Hung();
            }
        }

        private void settleAll() {
            for (Pending pending : futures) {
                settle(pending);
            }
        }

        private void closeHere(Handle<Res> handle) {
            close(handle, "Handle.close() on the scenario thread");
        }

        private void closeOff(Handle<Res> handle) throws Exception {
            if (handle != null) {
                helper("a close off attachment", () -> close(handle, "Handle.close() off attachment"));
            }
        }

        private void close(Handle<Res> handle, String name) {
            if (handle == null || !held.remove(handle)) {
                return;
            }
            Res res = handle.get();
            res.openHandles.decrementAndGet();
            try {
                handle.close();
                trace.add(name + " " + res);
            } catch (Throwable t) {
                trace.add(name + " threw " + describe(t));
                violations.add(
                        name + " threw " + describe(t) + (involves(t, plan.injected) ? " (the injected fault)" : ""));
            }
        }

        private void closeAgain(Handle<Res> handle) {
            if (handle == null) {
                return;
            }
            try {
                handle.close();
                trace.add("second Handle.close()");
            } catch (Throwable t) {
                violations.add("a second Handle.close() threw " + describe(t));
            }
        }

        /** Runs the drainers the executor queued, on a thread of their own, bounded. */
        private void pumpDrainers() throws Exception {
            List<Runnable> tasks = drainers.takeAll();
            if (!tasks.isEmpty()) {
                helper("the drainer", () -> tasks.forEach(Runnable::run));
                trace.add("ran " + tasks.size() + " drainer(s)");
            }
        }

        /** Runs {@code body} on a new, detached thread and waits for it, bounded. */
        private void helper(String name, Runnable body) throws Exception {
            AtomicBoolean hung = new AtomicBoolean();
            Thread thread = new Thread(
                    () -> {
                        try {
                            body.run();
                        } catch (Hung h) {
                            hung.set(true);
                        } catch (Throwable t) {
                            violations.add(name + " threw " + describe(t));
                        }
                    },
                    "fault-helper");
            thread.setDaemon(true);
            thread.start();
            thread.join(HELPER_BOUND.toMillis());
            if (hung.get()) {
                throw new Hung();
            }
            if (thread.isAlive()) {
                violations.add(name + " did not finish within " + HELPER_BOUND + "; " + pool.stats() + ": "
                        + TestKit.describeStack(thread));
                throw new Hung();
            }
        }
    }

    // ------------------------------------------------------------------ single flight

    @ParameterizedTest
    @EnumSource(
            value = Kind.class,
            names = {"RUNTIME", "CHECKED", "ERROR"})
    void everyAcquirerWaitingOnAFailedCreationSeesTheFailureAndTheKeyIsNotStuck(Kind kind) throws Exception {
        Engine engine = new Engine();
        CountDownLatch creating = new CountDownLatch(1);
        CountDownLatch fail = new CountDownLatch(1);
        Throwable fault = kind.make("factory");
        AtomicInteger calls = new AtomicInteger();
        engine.beforeCreate = key -> {
            if (calls.incrementAndGet() == 1) {
                creating.countDown();
                TestKeyedPoolFixtures.awaitLatch(fail);
                throw TestKeyedPoolFixtures.sneakyThrow(fault);
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(AttachMode.SHARED).maxObjects(2));
        List<TestKit.Forked<Handle<Session>>> attached = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            attached.add(TestKit.fork("acquirer-" + t, () -> {
                try (Attachment attachment = pool.attach()) {
                    return pool.acquire("k");
                }
            }));
            if (t == 0) {
                TestKeyedPoolFixtures.awaitLatch(creating);
            } else {
                TestKit.awaitParked(attached.get(t).thread); // waiting for the creation under way
            }
        }
        List<CompletableFuture<Handle<Session>>> async = List.of(
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture(),
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture());
        fail.countDown();

        List<String> problems = new ArrayList<>();
        for (TestKit.Forked<Handle<Session>> acquirer : attached) {
            Throwable seen = acquirer.joinFailure();
            String problem = factoryFailureShapeProblem(seen, fault);
            if (problem != null) {
                problems.add(acquirer.thread.getName() + ": " + problem);
            }
        }
        for (CompletableFuture<Handle<Session>> future : async) {
            Throwable seen = CapacityTest.failureOf(future);
            String problem = factoryFailureShapeProblem(seen, fault);
            if (problem != null) {
                problems.add("acquireAsync: " + problem);
            }
        }
        try (Attachment attachment = pool.attach();
                Handle<Session> again = pool.acquire("k")) {
            if (!again.get().key.equals("k")) {
                problems.add("the key was stuck");
            }
        }
        CapacityTest.assertAllPermitsFree(pool, 2);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertNoProblems(problems);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCheckedFactoryExceptionReachesEveryKindOfAcquirerWithItsCause(AttachMode mode) throws Exception {
        Engine engine = new Engine();
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        engine.beforeCreate = key -> {
            if (key.startsWith("bad")) {
                Throwable fault = Kind.CHECKED.make("factory of '" + key + "'");
                thrown.add(fault);
                throw TestKeyedPoolFixtures.sneakyThrow(fault);
            }
        };
        RefPool<String, Session> pool =
                engine.build(engine.builder().attachMode(mode).maxObjects(1));
        List<String> problems = new ArrayList<>();
        try (Attachment attachment = pool.attach()) {
            try {
                pool.acquire("bad-attached").close();
                problems.add("the attached acquire returned");
            } catch (Throwable seen) {
                addShapeProblem(problems, "the attached acquire", seen, thrown.get(0));
            }
        }
        addShapeProblem(
                problems,
                "acquireAsync",
                CapacityTest.failureOf(
                        pool.acquireAsync("bad-async", CancellationToken.none()).toCompletableFuture()),
                thrown.get(1));
        Handle<Session> holder;
        try (Attachment attachment = pool.attach()) {
            holder = pool.acquire("holder");
        }
        CompletableFuture<Handle<Session>> waiter =
                pool.acquireAsync("bad-waiter", CancellationToken.none()).toCompletableFuture();
        try (Attachment attachment = pool.attach()) {
            holder.close(); // its permit goes to the waiter, whose creation fails
        }
        addShapeProblem(
                problems, "acquireAsync after waiting for capacity", CapacityTest.failureOf(waiter), thrown.get(2));
        CapacityTest.assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertNoProblems(problems);
    }

    private static void addShapeProblem(List<String> problems, String who, Throwable seen, Throwable fault) {
        String problem = factoryFailureShapeProblem(seen, fault);
        if (problem != null) {
            problems.add(who + ": " + problem);
        }
    }

    // ------------------------------------------------------------------ the drainer's executor

    /** Where a release off attachment hands its drainer to the executor. */
    enum DrainPath {
        /** The enqueue that crosses the threshold, on the closing thread. */
        URGENT,
        /** The drain delay's timer, on the JDK's delay scheduler. */
        DELAYED
    }

    /** An executor whose first {@code failures} calls throw; later calls run the task on a thread. */
    static final class FailingExecutor implements Executor {
        final Kind kind;
        final int failures;
        final AtomicInteger calls = new AtomicInteger();

        FailingExecutor(Kind kind, int failures) {
            this.kind = kind;
            this.failures = failures;
        }

        @Override
        public void execute(Runnable task) {
            int call = calls.incrementAndGet();
            if (call <= failures) {
                throw TestKeyedPoolFixtures.sneakyThrow(kind.make("executor call #" + call));
            }
            DRAINER_THREADS.execute(task);
        }
    }

    private static RefPool<String, Session> drainedBy(Engine engine, Executor executor, DrainPath path) {
        return engine.build(engine.builder()
                .attachMode(path == DrainPath.URGENT ? AttachMode.GLOBAL : AttachMode.SHARED)
                .executor(executor)
                .drainThreshold(path == DrainPath.URGENT ? 1 : 1024)
                .drainDelay(path == DrainPath.URGENT ? Duration.ofHours(1) : Duration.ofMillis(5)));
    }

    static Stream<Arguments> executorKindsAndPaths() {
        return Kind.EXECUTOR_KINDS.stream()
                .flatMap(kind -> Stream.of(DrainPath.values()).map(path -> Arguments.of(kind, path)));
    }

    @ParameterizedTest(name = "{0} on the {1} path")
    @MethodSource("executorKindsAndPaths")
    void aReleaseWhoseDrainerTheExecutorFailedToStartIsStillAppliedWithNobodyAttaching(Kind kind, DrainPath path)
            throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = drainedBy(engine, new FailingExecutor(kind, 1), path);
        List<String> problems = new ArrayList<>();
        Handle<Session> handle = acquireAttached(pool, "a");
        Session a = handle.get();
        closeOffAttachment(handle, problems);
        awaitWithoutAttaching(
                problems,
                "the release of 'a', whose drainer the executor failed to start, is applied by a later drainer",
                () -> pool.stats().pendingDecrements() == 0 && a.isDisposed(),
                pool);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        assertNoProblems(problems);
    }

    @ParameterizedTest(name = "{0} on the {1} path")
    @MethodSource("executorKindsAndPaths")
    void aDrainerTheExecutorFailedToStartDoesNotStopLaterDrainers(Kind kind, DrainPath path) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = drainedBy(engine, new FailingExecutor(kind, 1), path);
        List<String> problems = new ArrayList<>();
        Handle<Session> first = acquireAttached(pool, "a");
        closeOffAttachment(first, problems);
        pool.attach().close(); // applies the first release, whatever became of its drainer
        Handle<Session> second = acquireAttached(pool, "b");
        Session b = second.get();
        closeOffAttachment(second, problems);
        awaitWithoutAttaching(
                problems,
                "a release after the executor's failure is applied by a drainer",
                () -> pool.stats().pendingDecrements() == 0 && b.isDisposed(),
                pool);
        pool.close();
        engine.awaitAllDisposedExactlyOnce();
        assertNoProblems(problems);
    }

    @ParameterizedTest
    @EnumSource(
            value = Kind.class,
            names = {"REJECTED", "RUNTIME", "NATIVE_THREAD_OOM"})
    void afterCloseTheLastReleaseDisposesItsObjectEvenIfTheExecutorFailsOnce(Kind kind) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = drainedBy(engine, new FailingExecutor(kind, 1), DrainPath.URGENT);
        List<String> problems = new ArrayList<>();
        Handle<Session> handle = acquireAttached(pool, "a");
        Session a = handle.get();
        pool.close(); // 'a' is live: it is disposed when its handle closes
        closeOffAttachment(handle, problems); // nobody can attach any more: only a drainer can apply it
        awaitWithoutAttaching(
                problems,
                "the last release after close disposes 'a'",
                () -> a.isDisposed() && pool.stats().pendingDecrements() == 0,
                pool);
        engine.assertNoViolations();
        assertNoProblems(problems);
    }

    @ParameterizedTest
    @EnumSource(DrainPath.class)
    void anExecutorThatRejectsEveryDrainerStillHasEveryReleaseApplied(DrainPath path) throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = drainedBy(engine, new FailingExecutor(Kind.REJECTED, Integer.MAX_VALUE), path);
        List<String> problems = new ArrayList<>();
        for (String key : List.of("a", "b", "c")) {
            Handle<Session> handle = acquireAttached(pool, key);
            Session session = handle.get();
            closeOffAttachment(handle, problems);
            awaitWithoutAttaching(
                    problems,
                    "the release of '" + key + "' is applied though the executor rejects every drainer",
                    () -> session.isDisposed() && pool.stats().pendingDecrements() == 0,
                    pool);
        }
        pool.close();
        engine.assertAllDisposedExactlyOnce();
        assertNoProblems(problems);
    }

    private static Handle<Session> acquireAttached(RefPool<String, Session> pool, String key) {
        try (Attachment attached = pool.attach()) {
            Handle<Session> handle = pool.acquire(key);
            handle.get().openHandles.incrementAndGet();
            return handle;
        }
    }

    /** Closes {@code handle} on a detached thread; a throw is a problem. */
    private static void closeOffAttachment(Handle<Session> handle, List<String> problems) throws Exception {
        handle.get().openHandles.decrementAndGet();
        Throwable thrown = TestKeyedPoolFixtures.onOtherThread(() -> {
            try {
                handle.close();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
        if (thrown != null) {
            problems.add("Handle.close() off attachment threw " + describe(thrown));
        }
    }

    private static void awaitWithoutAttaching(
            List<String> problems, String what, BooleanSupplier condition, RefPool<?, ?> pool) {
        awaitWithoutAttaching(problems, () -> what, condition, pool);
    }

    /** Waits, bounded, for {@code condition}; if it never holds, adds {@code what} (read then) to the problems. */
    private static void awaitWithoutAttaching(
            List<String> problems, Supplier<String> what, BooleanSupplier condition, RefPool<?, ?> pool) {
        try {
            Awaitility.await()
                    .atMost(DRAINER_BOUND)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(2))
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException timeout) {
            problems.add("within " + DRAINER_BOUND + ", with nobody attaching: " + what.get() + " — not so; "
                    + pool.stats());
        }
    }

    private static void assertNoProblems(List<String> problems) {
        if (!problems.isEmpty()) {
            fail(String.join("\n", problems));
        }
    }

    // ------------------------------------------------------------------ the leak detector's path

    /** Acquires a handle and drops it unclosed; a method of its own, so nothing keeps it reachable. */
    private static <K, V> void dropHandle(RefPool<K, V> pool, K key) {
        try (Attachment attached = pool.attach()) {
            pool.acquire(key);
        }
    }

    @ParameterizedTest(name = "{0} from the leak path''s key toString call #{1}")
    @MethodSource("leakPathToStringFaults")
    void aDroppedHandleIsReleasedEvenWhenTheKeyToStringThrowsOnTheLeakPath(Kind kind, int offset) {
        FaultPlan plan = FaultPlan.clean();
        FaultEngine engine = new FaultEngine(plan);
        RefPool<FaultKey, Res> pool = RefPool.<FaultKey, Res>builder(engine::create)
                .disposer(engine::dispose)
                .errorListener(engine::onError)
                .leakDetection(LeakDetection.PARANOID)
                .maxObjects(1)
                .drainDelay(Duration.ofMillis(5))
                .executor(DRAINER_THREADS)
                .build();
        engine.pool = pool;
        dropHandle(pool, new FaultKey("dropped", plan));
        // the acquisition's calls are counted: the next ones are the leak detector's
        plan.arm(Callback.KEY_TO_STRING, plan.calls(Callback.KEY_TO_STRING) + offset, kind);
        List<String> problems = new ArrayList<>();
        try {
            Awaitility.await()
                    .atMost(GC_BOUND)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        System.gc();
                        return pool.stats().leaks() == 1;
                    });
        } catch (ConditionTimeoutException timeout) {
            fail("the dropped handle was never found by the leak detector: " + pool.stats());
        }
        awaitWithoutAttaching(
                problems,
                () -> "the dropped handle's reference is released and its object disposed ("
                        + (plan.fired() ? "the key threw at " + site(plan.injected) : "the key did not throw") + ")",
                () -> pool.stats().live() == 0
                        && pool.stats().pendingDecrements() == 0
                        && engine.created.get(0).disposals.get() == 1,
                pool);
        plan.quiet(true);
        pool.close();
        for (Res res : engine.created) {
            if (res.disposals.get() != 1) {
                problems.add(res + " was disposed " + res.disposals.get() + " times by the end");
            }
        }
        problems.addAll(engine.violations);
        assertNoProblems(problems);
    }

    static Stream<Arguments> leakPathToStringFaults() {
        return Kind.CALLBACK_KINDS.stream().flatMap(kind -> Stream.of(Arguments.of(kind, 1), Arguments.of(kind, 2)));
    }

    @ParameterizedTest
    @EnumSource(
            value = LeakDetection.class,
            names = {"SAMPLED", "PARANOID"})
    void droppedHandlesAreReleasedEvenWhenTheListenerAndTheDisposerThrow(LeakDetection mode) {
        Engine engine = new Engine();
        engine.afterDispose = session -> {
            throw TestKeyedPoolFixtures.sneakyThrow(Kind.CHECKED.make("disposer of " + session));
        };
        RefPool<String, Session> pool = engine.build(engine.builder()
                .leakDetection(mode)
                .drainDelay(Duration.ofMillis(5))
                .executor(DRAINER_THREADS)
                .errorListener(error -> {
                    engine.errors.add(error);
                    throw new TestFaults.InjectedError("listener on " + error.kind());
                }));
        int dropped = mode == LeakDetection.PARANOID ? 200 : 2_000;
        for (int i = 0; i < dropped; i++) {
            dropHandle(pool, "k" + i); // one handle per object: a tracked leak disposes its object
        }
        try {
            Awaitility.await()
                    .atMost(GC_BOUND)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        System.gc();
                        PoolStats stats = pool.stats();
                        return stats.leaks() > 0
                                && (mode == LeakDetection.SAMPLED || stats.leaks() == dropped)
                                && stats.pendingDecrements() == 0
                                && stats.disposals() == stats.leaks();
                    });
        } catch (ConditionTimeoutException timeout) {
            fail("each leaked handle's object is disposed though the disposer and the listener throw — not so: "
                    + pool.stats());
        }
        pool.close();
        engine.assertNoViolations();
    }
}
