package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks a primitive with Lincheck: every interleaving of two threads doing try-acquire,
 * async acquire, cancel of their waiting future and release is linearizable to the sequential FIFO
 * semaphore {@link SemaphoreSpec} (for the mutex, {@link MutexSpec}, its one-permit case): no
 * barging or overtaking, no ownership or permit lost or duplicated, a cancel either wins (nothing
 * owned) or finds the grant (owned), a cancelled head admits the requests behind it. One small
 * subclass per primitive names the primitive and its specification.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public abstract class FifoLinearizabilityContract {
    private final AcquireRoles roles;
    private final Class<?> specification;

    protected FifoLinearizabilityContract(AcquireRoles roles, Class<?> specification) {
        this.roles = roles;
        this.specification = specification;
    }

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
                .sequentialSpecification(specification)
                .check(getClass());
    }
}
