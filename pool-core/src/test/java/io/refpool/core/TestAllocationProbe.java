package io.refpool.core;

import java.lang.management.ManagementFactory;

/**
 * Measures the bytes the current thread allocates per operation, with
 * {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}.
 *
 * <p>It warms the operation up first, so the JIT compiles it, then measures several rounds and
 * keeps the smallest: a round disturbed by a compilation, a coverage agent's first probe or a
 * profiler does not decide the result, while an operation that allocates on every call allocates in
 * every round.
 */
final class TestAllocationProbe {
    /** An operation that may throw. */
    @FunctionalInterface
    interface Op {
        void run() throws Exception;
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private TestAllocationProbe() {}

    /** {@return the fewest bytes per operation over five rounds of {@code ops}, after warm-up} */
    static double bytesPerOp(int ops, Op op) throws Exception {
        for (int i = 0; i < 200_000; i++) {
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
