package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;

/**
 * Model-checks prompt cancellation of {@link AsyncMutex} with Lincheck: one thread acquires and at
 * once cancels the same future while the other releases, takes or waits for the lock. In every
 * interleaving exactly one outcome holds (cancelled and owning nothing, or granted and owning) and
 * the history is linearizable to {@link MutexSpec}.
 *
 * <p>Acquire-then-cancel is two steps: the queue position is fixed at the first, the outcome decided
 * at the second. So that an atomic specification can describe every history, it never runs in
 * parallel with itself, and there are two threads: with a third queueing between the two steps, a
 * release can grant a waiter whose place no atomic operation would have given it.
 */
public class AsyncMutexPromptCancellationTest {
    private final MutexRoles roles = new MutexRoles();

    @Operation(nonParallelGroup = "prompt")
    public int acquireThenCancel(@Param(gen = ThreadIdGen.class) int t) {
        return roles.acquireThenCancel(t);
    }

    @Operation
    public int tryLock(@Param(gen = ThreadIdGen.class) int t) {
        return roles.tryLock(t);
    }

    @Operation
    public int acquire(@Param(gen = ThreadIdGen.class) int t) {
        return roles.acquire(t);
    }

    @Operation
    public int unlock(@Param(gen = ThreadIdGen.class) int t) {
        return roles.unlock(t);
    }

    @Test
    void acquireThenCancelEndsEitherOwnedOrCancelledNeverLost() {
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
