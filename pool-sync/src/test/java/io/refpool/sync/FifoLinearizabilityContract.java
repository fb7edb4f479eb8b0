package io.refpool.sync;

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
public abstract class FifoLinearizabilityContract extends AcquireLincheckContract {
    protected FifoLinearizabilityContract(AcquireRoles roles, Class<?> specification) {
        super(roles, specification);
    }

    @Operation
    public int cancel(@Param(gen = ThreadIdGen.class) int t) {
        return roles.cancel(t);
    }

    @Test
    void acquireCancelAndReleaseAreLinearizableToAFifoSemaphore() {
        checkLinearizable(30);
    }
}
