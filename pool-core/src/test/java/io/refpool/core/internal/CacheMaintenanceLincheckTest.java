package io.refpool.core.internal;

import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks who runs the idle cache's maintenance ({@link CacheMaintenance}) with Lincheck: puts
 * that ask for a round after their write, and the cache's own maintenance tasks, in every
 * interleaving of the explored scenarios, with a runner that takes one handed-over turn (so its
 * last round, where requests run their own, is reached) and with the pool's four.
 *
 * <p>The model's round stands for the cache's maintenance under its lock: it takes in every write
 * made before it started. What the protocol promises, checked once every operation has returned:
 * a round started after the last write that asked for one, and no runner is left.
 */
public class CacheMaintenanceLincheckTest {
    /** The model: puts and the cache's tasks on one {@link CacheMaintenance}. */
    abstract static class Model {
        /** The writes made, each numbered; a put's write is in the cache before it asks for a round. */
        private final AtomicLong written = new AtomicLong();
        /** The highest write a round has taken in. */
        private final AtomicLong covered = new AtomicLong();

        private final Object cacheLock = new Object();

        private final Runnable round = () -> {
            synchronized (cacheLock) {
                long upTo = written.get();
                if (upTo > covered.get()) {
                    covered.set(upTo);
                }
            }
        };

        private final CacheMaintenance maintenance;

        Model(int handoffRounds) {
            maintenance = new CacheMaintenance(round, handoffRounds);
        }

        /** A put that leaves the cache over its bound. */
        @Operation
        public void putOverBound() {
            written.incrementAndGet();
            maintenance.request();
        }

        private final Runnable task = new CacheTasks.Task(round);

        /** The cache's own maintenance task, run by its executor inside a put that took the cache's lock. */
        @Operation
        public void cacheTask() {
            CacheTasks.executeInPut(maintenance, task);
        }

        /** The validation (on each model class: Lincheck would see one here twice). */
        void everyWriteIsCoveredAndNoRunnerIsLeft() {
            if (covered.get() != written.get()) {
                throw new IllegalStateException(
                        "the last round took in write " + covered.get() + " of " + written.get());
            }
            if (maintenance.state() != CacheMaintenance.IDLE) {
                throw new IllegalStateException("a runner is left: state " + maintenance.state());
            }
        }
    }

    /** A runner of one turn: the first handed-over request already meets its last round. */
    public static class OneTurn extends Model {
        public OneTurn() {
            super(1);
        }

        @Validate
        public void validate() {
            everyWriteIsCoveredAndNoRunnerIsLeft();
        }
    }

    /** The pool's runner. */
    public static class PoolRounds extends Model {
        public PoolRounds() {
            super(CacheMaintenance.HANDOFF_ROUNDS);
        }

        @Validate
        public void validate() {
            everyWriteIsCoveredAndNoRunnerIsLeft();
        }
    }

    @Test
    void putsAndTasksWithARunnerOfOneTurn() {
        options().check(OneTurn.class);
    }

    @Test
    void putsAndTasksWithThePoolsRunner() {
        options().check(PoolRounds.class);
    }

    private static ModelCheckingOptions options() {
        return new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(0)
                .actorsAfter(0)
                .iterations(30)
                .invocationsPerIteration(500);
    }
}
