package io.refpool.core;

import io.refpool.core.internal.ReleaseQueue;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the deferred-release queue ({@link ReleaseQueue}) with Lincheck: threads
 * enqueue as detached releasers do (lock, add, unlock, then raise the flag) while others drain as
 * attaching threads do (one acquire load; only when raised, clear the flag by CAS, then swap the
 * batch out under the lock).
 *
 * <p>With one drainer at a time (an {@code GLOBAL} pool: only the attached thread drains) the
 * queue is linearizable to a plain counter of pending releases that a drain empties. With drainers
 * in parallel (a {@code SHARED} pool) it is not, by design: a drainer that finds the flag cleared by
 * another, still swapping, goes on without waiting (the benign race). There the model checks what
 * the protocol promises instead, after every explored interleaving: every release was taken by
 * exactly one drain, and once all threads are done one more drain leaves nothing behind.
 */
class DeferredReleaseLincheckTest {
    /** The queue, and a record of which item each drain took. */
    abstract static class QueueModel {
        /** More than any scenario below enqueues: 1 + 3 threads x 3 operations + 1. */
        private static final int MAX_ITEMS = 16;

        final ReleaseQueue<Integer> queue = new ReleaseQueue<>();
        private final AtomicInteger nextItem = new AtomicInteger();
        /** How many drains took each item; the items are numbered from 0 in enqueue order. */
        private final AtomicIntegerArray taken = new AtomicIntegerArray(MAX_ITEMS);

        void enqueueOne() {
            queue.enqueue(nextItem.getAndIncrement());
        }

        int drainAll() {
            ArrayList<Integer> batch = queue.takeIfDirty();
            if (batch == null) {
                return 0;
            }
            for (Integer item : batch) {
                taken.incrementAndGet(item);
            }
            return batch.size();
        }

        /** After all threads: one more drain leaves the queue empty, and nothing was lost or doubled. */
        void checkFinalState() {
            drainAll();
            int enqueued = nextItem.get();
            for (int i = 0; i < enqueued; i++) {
                if (taken.get(i) != 1) {
                    throw new IllegalStateException("release " + i + " of " + enqueued + " was taken " + taken.get(i)
                            + " times" + (taken.get(i) == 0 ? " even after a final drain: stranded" : ""));
                }
            }
            if (queue.volatileSize() != 0 || queue.isDirty()) {
                throw new IllegalStateException("after a final drain the queue still reports size "
                        + queue.volatileSize() + ", dirty " + queue.isDirty());
            }
        }
    }

    /** One drainer at a time: linearizable to {@link PendingCounter}. */
    public static class OneDrainer extends QueueModel {
        @Operation
        public void enqueue() {
            enqueueOne();
        }

        @Operation(nonParallelGroup = "drainer")
        public int drain() {
            return drainAll();
        }

        @Validate
        public void finalAttachLeavesNothingPending() {
            checkFinalState();
        }
    }

    /** The sequential specification: a count of pending releases that a drain takes all of. */
    public static class PendingCounter {
        private int pending;

        public void enqueue() {
            pending++;
        }

        public int drain() {
            int taken = pending;
            pending = 0;
            return taken;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof PendingCounter && ((PendingCounter) o).pending == pending;
        }

        @Override
        public int hashCode() {
            return pending;
        }
    }

    /** Drainers in parallel: results are not compared, the final state is. */
    public static class ParallelDrainers extends QueueModel {
        @Operation
        public void enqueue() {
            enqueueOne();
        }

        @Operation
        public void drain() {
            drainAll();
        }

        @Validate
        public void finalAttachLeavesNothingPending() {
            checkFinalState();
        }
    }

    @Test
    void withOneDrainerTheQueueIsLinearizableToAPendingCounter() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(10)
                .invocationsPerIteration(200)
                .sequentialSpecification(PendingCounter.class)
                .check(OneDrainer.class);
    }

    @Test
    void withParallelDrainersEveryReleaseIsTakenExactlyOnce() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(0)
                .iterations(10)
                .invocationsPerIteration(200)
                .check(ParallelDrainers.class);
    }
}
