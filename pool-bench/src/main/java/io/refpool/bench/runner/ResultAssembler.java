package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
        RunResult merged = merge(forks);
        Result<?> primary = merged.getPrimaryResult();
        Result<?> allocation = merged.getSecondaryResults().get(ALLOCATION_PER_OP);
        return measured(
                impl,
                merged,
                primary,
                forks.stream().map(fork -> fork.getPrimaryResult().getScore()).toList(),
                allocation == null ? Double.NaN : allocation.getScore(),
                allocation == null
                        ? List.of()
                        : forks.stream().map(ResultAssembler::bytesPerOp).toList(),
                ratio(merged, CREATIONS, REQUESTS, 1000.0),
                ratio(merged, CPU_NANOS, OPS, 1.0));
    }

    /**
     * The result of one method of a {@code @Group} benchmark, which JMH keeps as a secondary result
     * under the method's name: its own threads' score, and its percentiles when sampled. Bytes/op
     * and the counters are the group's and are left out; empty if JMH reported no such result.
     */
    static Optional<ImplResult> assembleRole(String impl, List<RunResult> forks, String role) {
        RunResult merged = merge(forks);
        Result<?> result = merged.getSecondaryResults().get(role);
        if (result == null) {
            return Optional.empty();
        }
        List<Double> forkScores = new ArrayList<>();
        for (RunResult fork : forks) {
            Result<?> own = fork.getSecondaryResults().get(role);
            forkScores.add(own == null ? Double.NaN : own.getScore());
        }
        return Optional.of(measured(impl, merged, result, forkScores, Double.NaN, List.of(), Double.NaN, Double.NaN));
    }

    /** {@code result}'s score, error, unit and percentiles, with what the caller read besides. */
    private static ImplResult measured(
            String impl,
            RunResult merged,
            Result<?> result,
            List<Double> forkScores,
            double bytesPerOp,
            List<Double> forkBytesPerOp,
            double creationsPer1k,
            double cpuNanosPerOp) {
        return new ImplResult(
                impl,
                result.getScore(),
                result.getScoreError(),
                result.getScoreUnit(),
                percentile(merged, result, 50),
                percentile(merged, result, 99),
                bytesPerOp,
                forkScores,
                forkBytesPerOp,
                creationsPer1k,
                cpuNanosPerOp);
    }

    /** {@return the {@code p}th percentile of {@code result}'s samples}, or NaN outside SampleTime */
    private static double percentile(RunResult merged, Result<?> result, double p) {
        return merged.getParams().getMode() == Mode.SampleTime
                ? result.getStatistics().getPercentile(p)
                : Double.NaN;
    }

    /** {@return the forks as one result}, as JMH merges the forks of one run */
    private static RunResult merge(List<RunResult> forks) {
        List<BenchmarkResult> all = new ArrayList<>();
        forks.forEach(fork -> all.addAll(fork.getBenchmarkResults()));
        return new RunResult(forks.get(0).getParams(), all);
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
