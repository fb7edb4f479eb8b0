package io.refpool.testkit;

import java.lang.management.ManagementFactory;

/**
 * Measures the bytes the current thread allocates per operation, with
 * {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}.
 *
 * <p>Each measurement first warms the operation up so the JIT compiles the caller (escape analysis
 * is what removes an uncontended guard), then measures several rounds and reports the smallest, so a
 * round disturbed by a compilation or a profiler does not decide the result. On a busy machine, or
 * with a coverage agent instrumenting every class, the optimizing compiler's queue can be long
 * enough that the warm-up ends before the caller is compiled; so after the first five rounds more
 * follow, for at most {@link #EXTRA_ROUNDS_BUDGET}, until one allocates nothing (or no more than
 * the caller's goal). Every round is a
 * full measurement: the smallest is what the steady state allocates, never less.
 */
public final class AllocationMeter {
    /** An operation that may throw. */
    @FunctionalInterface
    public interface Op {
        void run() throws Exception;
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** How long rounds may go on after the first five, while none has allocated nothing yet. */
    public static final java.time.Duration EXTRA_ROUNDS_BUDGET = java.time.Duration.ofSeconds(10);

    private AllocationMeter() {}

    /**
     * {@return the fewest bytes per operation over rounds of {@code ops} after warm-up}: five
     * rounds, then more within {@link #EXTRA_ROUNDS_BUDGET} until a round allocates nothing
     */
    public static double bytesPerOp(int ops, Op op) throws Exception {
        return bytesPerOp(ops, 0, op);
    }

    /**
     * {@return the fewest bytes per operation over rounds of {@code ops} after warm-up}: five
     * rounds, then more within {@link #EXTRA_ROUNDS_BUDGET} until a round allocates at most
     * {@code goal} bytes per operation
     */
    public static double bytesPerOp(int ops, double goal, Op op) throws Exception {
        for (int i = 0; i < 300_000; i++) {
            op.run();
        }
        double best = Double.MAX_VALUE;
        long deadline = System.nanoTime() + EXTRA_ROUNDS_BUDGET.toNanos();
        for (int round = 0; round < 5 || (best > goal && System.nanoTime() - deadline < 0); round++) {
            long before = THREADS.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < ops; i++) {
                op.run();
            }
            long after = THREADS.getCurrentThreadAllocatedBytes();
            best = Math.min(best, (double) (after - before) / ops);
        }
        return best;
    }
}
