package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the blocking waits of {@link AsyncMutex} and {@link AsyncSharedMutex} with Lincheck:
 * threads acquire, hold and release through the blocking path (spinning, the parked flag, parking,
 * granting, a batch's chained wake-up), and in every interleaving Lincheck explores no hold is
 * granted twice: one holder in the mutex, nobody beside a writer.
 *
 * <p>Lincheck's model checker lets a park return without an unpark (a park may wake spuriously),
 * so a lost wake-up does not show here; {@link ParkedFlagWakeupTest} forces the interleavings where
 * one could be lost.
 */
public class BlockingWakeupLincheckTest {
    private final AsyncMutex mutex = new AsyncMutex();
    private final AsyncSharedMutex shared = new AsyncSharedMutex();
    private int mutexHolders;
    private int writers;
    private int readers;

    /** {@return the holders seen inside the mutex: always 1} */
    @Operation
    public int mutexAcquireRelease() throws InterruptedException {
        try (Guard guard = mutex.acquireBlocking()) {
            int inside = ++mutexHolders;
            mutexHolders--;
            return inside;
        }
    }

    /** {@return whether a writer was inside while this reader held: never} */
    @Operation
    public boolean readerAcquireRelease() throws InterruptedException {
        try (Guard guard = shared.acquireSharedBlocking()) {
            synchronized (this) {
                readers++;
            }
            boolean writerInside;
            synchronized (this) {
                writerInside = writers != 0;
                readers--;
            }
            return writerInside;
        }
    }

    /** {@return whether anyone else was inside while this writer held: never} */
    @Operation
    public boolean writerAcquireRelease() throws InterruptedException {
        try (Guard guard = shared.acquireBlocking()) {
            boolean othersInside;
            synchronized (this) {
                othersInside = writers != 0 || readers != 0;
                writers++;
            }
            synchronized (this) {
                writers--;
            }
            return othersInside;
        }
    }

    /** The sequential specification: one holder at a time in the mutex, nobody beside a writer. */
    public static final class Spec {
        public int mutexAcquireRelease() {
            return 1;
        }

        public boolean readerAcquireRelease() {
            return false;
        }

        public boolean writerAcquireRelease() {
            return false;
        }
    }

    @Test
    void noHoldIsGrantedTwiceThroughTheBlockingPath() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0)
                .iterations(20)
                .invocationsPerIteration(300)
                .sequentialSpecification(Spec.class)
                .check(getClass());
    }
}
