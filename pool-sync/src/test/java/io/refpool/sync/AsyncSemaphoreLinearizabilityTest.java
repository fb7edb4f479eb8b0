package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks {@link AsyncSemaphore} (two permits, requests of one or two) with Lincheck: every
 * interleaving of three threads doing try-acquire, async acquire, cancel and release is
 * linearizable to the sequential FIFO semaphore {@link SemaphoreSpec}: no overtaking, no permit
 * lost or duplicated, a cancelled head admits the requests behind it.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class AsyncSemaphoreLinearizabilityTest {
    private final SemaphoreRoles roles = new SemaphoreRoles();

    @Operation
    public int tryAcquire(@Param(gen = ThreadIdGen.class) int t, @Param(name = "permits") int n) {
        return roles.tryAcquire(t, n);
    }

    @Operation
    public int acquire(@Param(gen = ThreadIdGen.class) int t, @Param(name = "permits") int n) {
        return roles.acquire(t, n);
    }

    @Operation
    public int cancel(@Param(gen = ThreadIdGen.class) int t) {
        return roles.cancel(t);
    }

    @Operation
    public int release(@Param(gen = ThreadIdGen.class) int t) {
        return roles.release(t);
    }

    @Operation
    public int availablePermits() {
        return roles.availablePermits();
    }

    @Test
    void acquireCancelAndReleaseAreLinearizableToAFifoSemaphore() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(30)
                .invocationsPerIteration(200)
                .sequentialSpecification(SemaphoreSpec.class)
                .check(getClass());
    }
}
