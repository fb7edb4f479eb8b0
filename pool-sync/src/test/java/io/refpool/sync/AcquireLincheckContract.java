package io.refpool.sync;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * The operations every Lincheck model of a mutex or semaphore has (try-acquire, async acquire,
 * release by the owner, a look at the free permits) over {@link AcquireRoles}, and the model
 * checking run; {@link FifoLinearizabilityContract} and {@link PromptCancellationContract} add
 * their way of cancelling. Two threads, so that the run stays within a unit test's time.
 */
@Param(name = "permits", gen = IntGen.class, conf = "1:2")
public abstract class AcquireLincheckContract {
    final AcquireRoles roles;
    private final Class<?> specification;

    AcquireLincheckContract(AcquireRoles roles, Class<?> specification) {
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
    public int release(@Param(gen = ThreadIdGen.class) int t) {
        return roles.release(t);
    }

    @Operation
    public int availablePermits() {
        return roles.availablePermits();
    }

    /** Checks every interleaving Lincheck explores in {@code iterations} scenarios against the specification. */
    void checkLinearizable(int iterations) {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(iterations)
                .invocationsPerIteration(200)
                .sequentialSpecification(specification)
                .check(getClass());
    }
}
