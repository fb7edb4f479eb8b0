package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * Turns the JMH results of one row × implementation, one {@link RunResult} per fork, into an
 * {@link ImplResult}.
 *
 * <pre>{@code
 * ImplResult swapFlag = ResultAssembler.assemble("swap-flag", List.of(fork1, fork2));
 * }</pre>
 *
 * <p>The forks are merged the way JMH merges the forks of one run (a {@link RunResult} over all
 * their {@link BenchmarkResult}s), so score, error and SampleTime percentiles are exactly what JMH
 * would report for that many forks; the per-fork scores are kept for the ratios.
 */
final class ResultAssembler {
    /** The GC profiler's allocation per operation, in bytes. */
    static final String ALLOCATION_PER_OP = "gc.alloc.rate.norm";
    /** A benchmark's {@code @AuxCounters} of objects created and of requests made. */
    static final String CREATIONS = "creations";

    static final String REQUESTS = "requests";
    /** A benchmark's {@code @AuxCounters} of its threads' CPU time and of their operations. */
    static final String CPU_NANOS = "cpuNanos";

    static final String OPS = "ops";

    private ResultAssembler() {}

    static ImplResult assemble(String impl, List<RunResult> forks) {
        List<BenchmarkResult> all = new ArrayList<>();
        forks.forEach(fork -> all.addAll(fork.getBenchmarkResults()));
        RunResult merged = new RunResult(forks.get(0).getParams(), all);
        Result<?> primary = merged.getPrimaryResult();
        boolean sampled = merged.getParams().getMode() == Mode.SampleTime;
        Result<?> allocation = merged.getSecondaryResults().get(ALLOCATION_PER_OP);
        return new ImplResult(
                impl,
                primary.getScore(),
                primary.getScoreError(),
                primary.getScoreUnit(),
                sampled ? primary.getStatistics().getPercentile(50) : Double.NaN,
                sampled ? primary.getStatistics().getPercentile(99) : Double.NaN,
                allocation == null ? Double.NaN : allocation.getScore(),
                forks.stream().map(fork -> fork.getPrimaryResult().getScore()).toList(),
                allocation == null
                        ? List.of()
                        : forks.stream().map(ResultAssembler::bytesPerOp).toList(),
                ratio(merged, CREATIONS, REQUESTS, 1000.0),
                ratio(merged, CPU_NANOS, OPS, 1.0));
    }

    /** {@return {@code scale} × counter ÷ per over all forks}, or NaN without those counters */
    private static double ratio(RunResult merged, String counter, String per, double scale) {
        Result<?> numerator = merged.getSecondaryResults().get(counter);
        Result<?> denominator = merged.getSecondaryResults().get(per);
        if (numerator == null || denominator == null || denominator.getScore() <= 0) {
            return Double.NaN;
        }
        return scale * numerator.getScore() / denominator.getScore();
    }

    private static double bytesPerOp(RunResult fork) {
        Result<?> allocation = fork.getSecondaryResults().get(ALLOCATION_PER_OP);
        return allocation == null ? Double.NaN : allocation.getScore();
    }
}
