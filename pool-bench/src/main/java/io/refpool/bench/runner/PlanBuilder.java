package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Expands a suite's benchmarks into rows and interleaved runs.
 *
 * <pre>{@code
 * SuitePlan plan = PlanBuilder.plan(Suite.ATTACH, catalog.benchmarks(Suite.ATTACH), 2, List.of(1, 2, 4));
 * }</pre>
 *
 * <p>A row is a benchmark × one combination of its non-{@code impl} parameters × one thread count:
 * every count of {@code threads} for a {@code @Scales} method, the annotated count otherwise. The
 * runs of a row are interleaved — fork 1 of every implementation, then fork 2 of every
 * implementation (A B A B) — so that a drift in the machine's speed during the row hits every
 * implementation alike, and each fork's ratio compares neighbours in time.
 */
final class PlanBuilder {
    private PlanBuilder() {}

    static SuitePlan plan(Suite suite, List<BenchmarkDescriptor> benchmarks, int forks, List<Integer> threads) {
        List<Row> rows = new ArrayList<>();
        for (BenchmarkDescriptor benchmark : benchmarks) {
            List<Integer> counts = benchmark.scales() ? threads : List.of(benchmark.threads());
            for (SortedMap<String, String> params : combinations(benchmark.rowParams())) {
                for (int count : counts) {
                    rows.add(new Row(
                            suite.commandName(),
                            benchmark.className(),
                            benchmark.method(),
                            benchmark.mode(),
                            params,
                            count,
                            benchmark.scales(),
                            benchmark.impls(),
                            benchmark.roles()));
                }
            }
        }
        List<PlannedRun> runs = new ArrayList<>();
        for (Row row : rows) {
            for (int fork = 1; fork <= forks; fork++) {
                if (row.impls().isEmpty()) {
                    runs.add(new PlannedRun(row, Optional.empty(), fork, forks));
                }
                for (String impl : row.impls()) {
                    runs.add(new PlannedRun(row, Optional.of(impl), fork, forks));
                }
            }
        }
        return new SuitePlan(suite, rows, runs);
    }

    /** Every combination of the parameter values, the first parameter varying slowest. */
    static List<SortedMap<String, String>> combinations(SortedMap<String, List<String>> params) {
        List<SortedMap<String, String>> combinations = new ArrayList<>();
        combinations.add(new TreeMap<>());
        for (Map.Entry<String, List<String>> param : params.entrySet()) {
            List<SortedMap<String, String>> extended = new ArrayList<>();
            for (SortedMap<String, String> partial : combinations) {
                for (String value : param.getValue()) {
                    SortedMap<String, String> next = new TreeMap<>(partial);
                    next.put(param.getKey(), value);
                    extended.add(next);
                }
            }
            combinations = extended;
        }
        return combinations;
    }
}
