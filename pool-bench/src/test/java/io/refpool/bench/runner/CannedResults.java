package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.annotations.Mode;

/** Hand-built results for the report tests: no JMH run involved. */
final class CannedResults {
    static final List<String> IMPLS = List.of("refpool", "swap-flag", "always-lock");

    private CannedResults() {}

    static Row row(String benchmark, Mode mode, Map<String, String> params, int threads, boolean scales) {
        return new Row(
                "attach",
                "io.refpool.bench.AttachBenchmark",
                benchmark,
                mode,
                new TreeMap<>(params),
                threads,
                scales,
                IMPLS,
                List.of());
    }

    static ImplResult thrpt(String impl, double... forkScores) {
        List<Double> forks = new ArrayList<>();
        double sum = 0;
        for (double score : forkScores) {
            forks.add(score);
            sum += score;
        }
        return new ImplResult(
                impl,
                sum / forks.size(),
                0.01 * sum / forks.size(),
                "ops/s",
                Double.NaN,
                Double.NaN,
                0.0,
                forks,
                List.of(),
                Double.NaN,
                Double.NaN);
    }

    /**
     * The attach suite at 1, 2 and 4 threads: refpool scales linearly from 100M ops/s, swap-flag
     * halves with each doubling from 50M, always-lock stays at 30M; plus one SampleTime row.
     */
    static SuiteResult attachSuite() {
        List<RowResult> rows = new ArrayList<>();
        for (int threads : List.of(1, 2, 4)) {
            Row row = row("nested", Mode.Throughput, Map.of("state", "sparse"), threads, true);
            rows.add(new RowResult(
                    row,
                    List.of(
                            thrpt("refpool", 100e6 * threads, 110e6 * threads),
                            thrpt("swap-flag", 50e6 / threads, 50e6 / threads),
                            thrpt("always-lock", 30e6, 40e6)),
                    List.of()));
        }
        Row sampled = row("acquireRelease", Mode.SampleTime, Map.of("state", "empty"), 1, false);
        rows.add(new RowResult(
                sampled,
                List.of(
                        new ImplResult(
                                "refpool",
                                20.0,
                                1.5,
                                "ns/op",
                                18.0,
                                45.0,
                                0.0,
                                List.of(20.0, 20.0),
                                List.of(0.0, 0.0),
                                Double.NaN,
                                Double.NaN),
                        new ImplResult(
                                "swap-flag",
                                60.0,
                                2.5,
                                "ns/op",
                                55.0,
                                120.0,
                                24.0,
                                List.of(50.0, 70.0),
                                List.of(0.0, 48.0),
                                Double.NaN,
                                Double.NaN)),
                List.of("always-lock")));
        return new SuiteResult("attach", "AttachBenchmark", rows);
    }
}
