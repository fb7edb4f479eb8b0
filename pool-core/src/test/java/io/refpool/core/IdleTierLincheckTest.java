package io.refpool.core;

import io.refpool.core.BoundedEngines.Engine;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Stress-tests the lazy idle tier with Lincheck, through the whole pool and a real Caffeine cache:
 * revivals (count 0 to 1 on an object the cache
 * still lists), idling (1 to 0, nothing written to the cache), the cache's size bound evicting an
 * object while another thread revives it, deferred closes applied by a later attach, and the
 * capacity bound reclaiming an idle object for another key, all interleaved on two keys.
 *
 * <p>The pool is {@code SHARED}, holds one object at most ({@code maxObjects(1)}) and idles one
 * ({@code maximumSize(1)}), and Caffeine runs its maintenance on the calling thread, so that
 * every transition of the tier happens on the scenario's threads. Lincheck's stress mode runs the
 * scenarios on real threads: its model checker does not get through Caffeine's maintenance, so the
 * tier's own protocol is model-checked on an entry alone ({@code EntryIdleLincheckTest}). The results are not
 * compared with a sequential model (which object a request gets depends on the cache's policy);
 * what the tier promises is checked on every use and after every interleaving: an object is never
 * disposed while a handle to it is open, never used after its disposal, disposed exactly once,
 * and there are never more objects than the bound.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
public class IdleTierLincheckTest {
    private static final String[] KEYS = {"a", "b"};

    private final BoundedEngines engines = new BoundedEngines();
    /** Acquires refused because the other key's object was in use: expected, not compared. */
    private final AtomicInteger refusals = new AtomicInteger();

    private final RefPool<String, Engine> pool = RefPool.builder(engines::create)
            .attachMode(AttachMode.SHARED)
            .leakDetection(LeakDetection.OFF) // its Cleaner runs outside the model checker's threads
            .maxObjects(1)
            .idle(cache -> cache.maximumSize(1).executor(Runnable::run))
            .disposer(engines::dispose)
            .drainDelay(Duration.ofHours(1))
            .executor(task -> {}) // no drainer: only attaches apply deferred closes
            .build();

    /** Lincheck creates one instance per scenario. */
    public IdleTierLincheckTest() {}

    /** An attached request: revives the key's idle object or creates one, then idles it. */
    @Operation
    public void request(@Param(name = "key") int key) {
        try (Attachment attached = pool.attach();
                Handle<Engine> handle = pool.acquire(KEYS[key])) {
            engines.use(handle.get());
        } catch (CapacityExhaustedException full) { // the other key's object is in use
            refusals.incrementAndGet();
        }
    }

    /** A handle closed off the attachment: its decrement waits for the next attach to apply it. */
    @Operation
    public void closeDetached(@Param(name = "key") int key) {
        Handle<Engine> handle;
        try (Attachment attached = pool.attach()) {
            handle = pool.acquire(KEYS[key]);
        } catch (CapacityExhaustedException full) {
            refusals.incrementAndGet();
            return;
        }
        engines.use(handle.get());
        handle.close();
    }

    /** An attach with nothing to do: applies what was deferred, as any attach does. */
    @Operation
    public void attach() {
        pool.attach().close();
    }

    @Validate
    public void everyObjectDisposedOnceAndNeverInUse() {
        pool.close(); // applies pending closes and disposes what idles
        engines.checkEachDisposedOnce();
    }

    @Test
    void idleTierTransitionsKeepEveryObjectSafeAndDisposedOnce() {
        new StressOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(30)
                .invocationsPerIteration(1000)
                .check(IdleTierLincheckTest.class);
    }
}
