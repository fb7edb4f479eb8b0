package io.refpool.core.internal;

import io.refpool.core.Interrupter;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.sync.CancellationSource;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the interrupter's control of a running call ({@link RunControl}) with Lincheck:
 * calls whose run is registered with a token, racing that token's cancellation and a bounded
 * close's {@code interruptAll}, in every interleaving of the explored scenarios.
 *
 * <p>What the control promises, checked on every step and after every interleaving: the
 * interrupter is called at most once per call, never for a call whose function did not start
 * (that call fails instead, and its function never runs), and never once the call has returned;
 * and no run is left registered for a later close to interrupt.
 */
public class RunControlLincheckTest {
    /** One call's object: what happened to it, as the model sees it. */
    static final class Engine {
        static final int BEFORE = 0;
        static final int RUNNING = 1;
        static final int RETURNED = 2;
        static final int NEVER_STARTED = 3;

        final AtomicInteger phase = new AtomicInteger(BEFORE);
        final AtomicInteger interrupts = new AtomicInteger();
        /** The thread that makes the call, which runs its function right after the run starts. */
        final Thread caller = Thread.currentThread();
    }

    private final AtomicReference<String> violation = new AtomicReference<>();
    private final Set<Engine> engines = ConcurrentHashMap.newKeySet();
    private final CancellationSource caller = new CancellationSource();

    private final PoolState pool = new PoolState() {
        @Override
        public boolean isClosed() {
            return false;
        }

        @Override
        public boolean awaitCloseFinished() {
            return false;
        }

        @Override
        public String name() {
            return "lincheck";
        }

        @Override
        public void report(PoolError.Kind kind, Object key, String message, Throwable cause) {
            fail("reported " + kind + ": " + message);
        }

        @Override
        public void timedOut() {}

        @Override
        public void hook(PoolHooks.Point point) {}
    };

    private final Interrupter<String, Engine> interrupter = (key, engine) -> {
        engine.interrupts.incrementAndGet();
        int phase = engine.phase.get();
        if (phase == Engine.RETURNED) {
            fail("the interrupter was called for a call that had returned");
        } else if (phase == Engine.NEVER_STARTED) {
            fail("the interrupter was called for a call whose function never started");
        } else if (phase == Engine.BEFORE && Thread.currentThread() == engine.caller) {
            fail("the interrupter ran on the calling thread before the function started"); // a registration's
        }
        return Interrupter.Outcome.KEEP;
    };

    private final RunControl<String, Engine> runs = new RunControl<>(pool, null, interrupter, null);

    private void fail(String what) {
        violation.compareAndSet(null, what);
    }

    /** A call whose function the caller's token may stop ({@code callAsync}). */
    @Operation
    public void call() {
        Engine engine = new Engine();
        engines.add(engine);
        Entry<String, Engine> entry = new Entry<>("k", engine, null);
        try {
            runs.apply(
                    entry,
                    e -> {
                        e.phase.set(Engine.RUNNING);
                        return null;
                    },
                    caller.token(),
                    null,
                    0L);
            engine.phase.set(Engine.RETURNED);
        } catch (CancellationException | PoolClosedException stoppedBeforeStart) { // by the token, or the close
            if (engine.phase.get() != Engine.BEFORE) {
                fail("a call failed as not started after its function ran");
            }
            engine.phase.set(Engine.NEVER_STARTED);
        } catch (RuntimeException unexpected) {
            fail("the call failed with " + unexpected);
        }
    }

    /** The caller gives up. */
    @Operation
    public void cancel() {
        caller.cancel();
    }

    /** A bounded close at its limit. */
    @Operation
    public void interruptAll() {
        runs.interruptAll();
    }

    @Validate
    public void interruptedAtMostOnceAndOnlyWhileRunning() {
        if (violation.get() != null) {
            throw new IllegalStateException(violation.get());
        }
        for (Engine engine : engines) {
            if (engine.interrupts.get() > 1) {
                throw new IllegalStateException("the interrupter was called " + engine.interrupts.get() + " times");
            }
            if (engine.phase.get() == Engine.NEVER_STARTED && engine.interrupts.get() != 0) {
                throw new IllegalStateException("a call that never started was interrupted");
            }
        }
        int before = total();
        runs.interruptAll(); // a run left registered would be interrupted now, after its call ended
        if (total() != before) {
            throw new IllegalStateException("a run was left registered after its call ended");
        }
    }

    private int total() {
        int sum = 0;
        for (Engine engine : engines) {
            sum += engine.interrupts.get();
        }
        return sum;
    }

    @Test
    void callsRacingTheirTokenAndABoundedCloseInEveryInterleaving() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(1)
                .iterations(15)
                .invocationsPerIteration(300)
                .check(RunControlLincheckTest.class);
    }
}
