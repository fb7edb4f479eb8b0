package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks prompt cancellation with Lincheck: one thread acquires and at once cancels the same
 * future while the other releases, takes or waits. In every interleaving exactly one outcome holds
 * (cancelled and owning nothing, or granted and owning), no permit is lost, and the history is
 * linearizable to {@link SemaphoreSpec} (for the mutex, {@link MutexSpec}).
 *
 * <p>Acquire-then-cancel is two steps: the queue position is fixed at the first, the outcome decided
 * at the second. So that an atomic specification can describe every history, it never runs in
 * parallel with itself, and there are two threads: with a third queueing between the two steps, a
 * release can grant a waiter whose place no atomic operation would have given it.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public abstract class PromptCancellationContract extends AcquireLincheckContract {
    private final int iterations;

    protected PromptCancellationContract(AcquireRoles roles, Class<?> specification, int iterations) {
        super(roles, specification);
        this.iterations = iterations;
    }

    @Operation(nonParallelGroup = "prompt")
    public int acquireThenCancel(@Param(gen = ThreadIdGen.class) int t, @Param(name = "permits") int n) {
        return roles.acquireThenCancel(t, n);
    }

    @Test
    void acquireThenCancelEndsEitherOwnedOrCancelledNoPermitLost() {
        checkLinearizable(iterations);
    }
}
