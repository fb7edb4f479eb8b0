package io.refpool.bench.runner;

import java.util.List;

/**
 * The measurement of one implementation in one row, over all its forks. Absent numbers are
 * {@code NaN}: the error with a single measured iteration, percentiles outside SampleTime, bytes/op
 * when the GC profiler reported none.
 *
 * <pre>{@code
 * var refpool = new ImplResult("refpool", 1.2e8, 3e6, "ops/s", Double.NaN, Double.NaN, 0.0,
 *         List.of(1.19e8, 1.21e8), List.of(0.0, 0.0), Double.NaN, Double.NaN);
 * }</pre>
 *
 * @param impl the {@code impl} value, or {@link #NO_IMPL} in a single-implementation row
 * @param score JMH's score over all forks (the mean for time modes)
 * @param error JMH's 99.9% confidence half-width over all measured iterations
 * @param unit the score's unit, e.g. "ops/s" or "ns/op"
 * @param p50 the median of the sampled times (SampleTime only)
 * @param p99 the 99th percentile of the sampled times (SampleTime only)
 * @param bytesPerOp the GC profiler's {@code gc.alloc.rate.norm}
 * @param forkScores the score of each fork, in fork order, for the per-fork ratios
 * @param forkBytesPerOp {@code gc.alloc.rate.norm} of each fork, in fork order (empty without the
 *     GC profiler): a JIT outcome that differs between forks shows here, not in the mean
 * @param creationsPer1k objects created per 1,000 requests, from a benchmark's {@code creations} and
 *     {@code requests} counters (JMH {@code @AuxCounters}); {@code NaN} in a benchmark without them
 * @param cpuNanosPerOp CPU time per operation, summed over the benchmark threads, from a
 *     benchmark's {@code cpuNanos} and {@code ops} counters; {@code NaN} in a benchmark without them
 */
record ImplResult(
        String impl,
        double score,
        double error,
        String unit,
        double p50,
        double p99,
        double bytesPerOp,
        List<Double> forkScores,
        List<Double> forkBytesPerOp,
        double creationsPer1k,
        double cpuNanosPerOp) {

    /** The implementation name of a benchmark without an {@code impl} parameter. */
    static final String NO_IMPL = "";

    ImplResult {
        forkScores = List.copyOf(forkScores);
        forkBytesPerOp = List.copyOf(forkBytesPerOp);
    }

    boolean isRefpool() {
        return impl.equals(BenchmarkDescriptor.REFPOOL);
    }
}
