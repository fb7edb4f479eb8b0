package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks {@link AsyncMutex} with Lincheck: every interleaving of three threads doing
 * try-lock, async acquire, cancel of their waiting future and unlock by the owner is linearizable
 * to the sequential FIFO lock {@link MutexSpec}: no barging, no lost ownership, a cancel either wins
 * (nothing owned) or finds the grant (owned).
 */
public class AsyncMutexLinearizabilityTest {
    private final MutexRoles roles = new MutexRoles();

    @Operation
    public int tryLock(@Param(gen = ThreadIdGen.class) int t) {
        return roles.tryLock(t);
    }

    @Operation
    public int acquire(@Param(gen = ThreadIdGen.class) int t) {
        return roles.acquire(t);
    }

    @Operation
    public int cancel(@Param(gen = ThreadIdGen.class) int t) {
        return roles.cancel(t);
    }

    @Operation
    public int unlock(@Param(gen = ThreadIdGen.class) int t) {
        return roles.unlock(t);
    }

    @Operation
    public boolean isLocked() {
        return roles.isLocked();
    }

    @Test
    void acquireCancelAndUnlockAreLinearizableToAFifoLock() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(30)
                .invocationsPerIteration(200)
                .sequentialSpecification(MutexSpec.class)
                .check(getClass());
    }
}
