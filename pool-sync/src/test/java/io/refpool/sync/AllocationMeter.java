package io.refpool.sync;

import java.lang.management.ManagementFactory;

/**
 * Measures the bytes the current thread allocates per operation, with
 * {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}.
 *
 * <p>Each measurement first warms the operation up so the JIT compiles the caller (escape analysis
 * is what removes an uncontended guard), then measures several rounds and reports the smallest, so a
 * round disturbed by a compilation or a profiler does not decide the result.
 */
final class AllocationMeter {
    /** An operation that may throw. */
    @FunctionalInterface
    interface Op {
        void run() throws Exception;
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private AllocationMeter() {}

    /** {@return the fewest bytes per operation over five rounds of {@code ops} after warm-up} */
    static double bytesPerOp(int ops, Op op) throws Exception {
        for (int i = 0; i < 300_000; i++) {
            op.run();
        }
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
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
