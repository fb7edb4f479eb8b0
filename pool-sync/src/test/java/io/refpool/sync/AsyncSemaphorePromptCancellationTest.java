package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks prompt cancellation of {@link AsyncSemaphore} with Lincheck: one thread acquires and
 * at once cancels the same future while the other releases or takes permits; every outcome is
 * either cancelled with nothing owned or granted, and no permit is lost ({@link SemaphoreSpec}).
 * Two threads, and acquire-then-cancel never in parallel with itself, for the reason given in
 * {@link AsyncMutexPromptCancellationTest}.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public class AsyncSemaphorePromptCancellationTest {
    private final SemaphoreRoles roles = new SemaphoreRoles();

    @Operation(nonParallelGroup = "prompt")
    public int acquireThenCancel(@Param(gen = ThreadIdGen.class) int t, @Param(name = "permits") int n) {
        return roles.acquireThenCancel(t, n);
    }

    @Operation
    public int tryAcquire(@Param(gen = ThreadIdGen.class) int t, @Param(name = "permits") int n) {
        return roles.tryAcquire(t, n);
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
    void acquireThenCancelEndsEitherOwnedOrCancelledNoPermitLost() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(10)
                .invocationsPerIteration(200)
                .sequentialSpecification(SemaphoreSpec.class)
                .check(getClass());
    }
}
