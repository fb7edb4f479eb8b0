package io.refpool.core;

import io.refpool.core.BoundedEngines.Engine;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Stress-tests warm-ups with Lincheck, through a {@code GLOBAL} pool and a real Caffeine cache:
 * warm-ups of two keys interleaved with requests that hold the gate, invalidations, and the
 * capacity bound reclaiming an idle object for the other key. A warm-up makes its object with no
 * gate held and publishes it when the gate is free, on the thread that frees it if it was taken,
 * so both of its paths run here.
 *
 * <p>The executor runs each task on the calling thread, so a warm-up runs on the scenario's
 * thread that started it, and goes on, after a publish that waited, on the thread that gave the
 * gate up. Lincheck's stress mode runs the scenarios on real threads (its model checker does not
 * get through Caffeine's maintenance, see {@code IdleTierLincheckTest}); results are not compared
 * with a sequential model (a warm-up completes later than the call that started it), and what a
 * warm-up promises is checked after every interleaving: every warm-up ended, none failed, an
 * object is never disposed while a handle to it is open nor handed out after its disposal, there
 * are never more objects than the bound, and each is disposed exactly once.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
public class WarmUpLincheckTest {
    private static final String[] KEYS = {"a", "b"};

    private final BoundedEngines engines = new BoundedEngines();
    private final List<CompletableFuture<Integer>> warmUps = new CopyOnWriteArrayList<>();

    private final RefPool<String, Engine> pool = RefPool.builder(engines::create)
            .attachMode(AttachMode.GLOBAL)
            .leakDetection(LeakDetection.OFF) // its Cleaner runs outside the scenario's threads
            .maxObjects(1)
            .idle(cache -> cache.maximumSize(1).executor(Runnable::run))
            .disposer(engines::dispose)
            .errorListener(error -> engines.violation("error", "reported: " + error))
            .drainDelay(Duration.ofHours(1))
            .executor(Runnable::run)
            .build();

    /** Lincheck creates one instance per scenario. */
    public WarmUpLincheckTest() {}

    /** A request holding the gate: revives the key's idle object or creates one, then idles it. */
    @Operation
    public void request(@Param(name = "key") int key) {
        try (Attachment attached = pool.attach();
                Handle<Engine> handle = pool.acquire(KEYS[key])) {
            engines.use(handle.get());
        } catch (CapacityExhaustedException full) { // the other key's object is in use: expected
        }
    }

    /** Warms the key up, on this thread; it may finish on another. */
    @Operation
    public void warmUp(@Param(name = "key") int key) {
        warmUps.add(pool.warmUp(List.of(KEYS[key]), CancellationToken.none()).toCompletableFuture());
    }

    /** Retires the key's object: disposed now if idle, at its last release if in use. */
    @Operation
    public void invalidate(@Param(name = "key") int key) {
        pool.invalidate(KEYS[key]);
    }

    @Validate
    public void everyWarmUpEndedAndEveryObjectIsDisposedOnce() {
        for (CompletableFuture<Integer> warmUp : warmUps) {
            if (!warmUp.isDone()) {
                throw new IllegalStateException("a warm-up never ended");
            }
            if (warmUp.isCompletedExceptionally()) {
                throw new IllegalStateException("a warm-up failed: "
                        + warmUp.handle((made, failure) -> failure).join());
            }
        }
        pool.close();
        engines.checkEachDisposedOnce();
    }

    @Test
    void warmUpsBesideRequestsEndAndDisposeEveryObjectOnce() {
        new StressOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(20)
                .invocationsPerIteration(1000)
                .check(WarmUpLincheckTest.class);
    }
}
