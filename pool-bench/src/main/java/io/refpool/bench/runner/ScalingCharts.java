package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.DoubleSummaryStatistics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Builds the panels of a suite's chart from its scaling rows.
 *
 * <pre>{@code
 * List<ScalingChart> panels = ScalingCharts.build(attach);   // empty: nothing {@code @Scales}
 * }</pre>
 *
 * <p>One panel per scaling benchmark × parameter combination, one series per implementation,
 * rather than one crowded chart with a series per implementation × row: within a panel the lines
 * share a workload, so their gaps are the comparison, and each panel picks its own scale. The y
 * axis is the throughput of all threads together in ops/s; a time-mode row is converted (threads ×
 * 10^9 ÷ ns/op), so every panel reads "higher is better". It turns logarithmic when the panel's
 * largest value exceeds {@value #LOG_SCALE_SPREAD} times its smallest. Thread counts sit at equal
 * distances (1, 2, 4, 8 is a doubling series). refpool is always red; peers take the other colours
 * in their declared order.
 */
final class ScalingCharts {
    static final double LOG_SCALE_SPREAD = 20;

    static final String REFPOOL_COLOR = "#d62728";
    private static final List<String> PEER_COLORS =
            List.of("#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#7f7f7f", "#17becf");

    private ScalingCharts() {}

    static List<ScalingChart> build(SuiteResult suite) {
        Map<String, List<RowResult>> panels = new LinkedHashMap<>();
        for (RowResult result : suite.rows()) {
            if (result.row().scales()) {
                String key = result.row().label() + " " + result.row().mode();
                panels.computeIfAbsent(key, k -> new ArrayList<>()).add(result);
            }
        }
        List<ScalingChart> charts = new ArrayList<>();
        for (List<RowResult> rows : panels.values()) {
            panel(suite, rows).ifPresent(charts::add);
        }
        return charts;
    }

    /**
     * The colour of a series: refpool's own, else a peer colour by its position among {@code names},
     * the panel's series names (not its impls: "refpool queue check" is a series no impl is named).
     */
    static String colorOf(String name, List<String> names) {
        if (name.equals(BenchmarkDescriptor.REFPOOL)) {
            return REFPOOL_COLOR;
        }
        List<String> peers = names.stream()
                .filter(n -> !n.equals(BenchmarkDescriptor.REFPOOL))
                .toList();
        int index = Math.max(0, peers.indexOf(name));
        return PEER_COLORS.get(index % PEER_COLORS.size());
    }

    /**
     * The name of a series in a panel: the row's implementation, or the benchmark's name where it
     * has none; except that the line named refpool is always the pool's own code. The pool's nested
     * attach ({@code nestedPool}, no {@code impl}) is refpool, and the release queue's check alone
     * in a harness ({@code nested} and {@code nestedLayout} with {@code impl=refpool}) is named
     * for what it is.
     */
    static String seriesName(String benchmark, String impl) {
        if (impl.equals(ImplResult.NO_IMPL)) {
            return benchmark.equals("nestedPool") ? BenchmarkDescriptor.REFPOOL : benchmark;
        }
        if (impl.equals(BenchmarkDescriptor.REFPOOL)
                && (benchmark.equals("nested") || benchmark.equals("nestedLayout"))) {
            return "refpool queue check";
        }
        return impl;
    }

    private static Optional<ScalingChart> panel(SuiteResult suite, List<RowResult> rows) {
        Row first = rows.get(0).row();
        List<Integer> threads =
                rows.stream().map(r -> r.row().threads()).distinct().sorted().toList();
        Map<String, TreeMap<Integer, Double>> points = new LinkedHashMap<>();
        for (RowResult result : rows) {
            for (ImplResult impl : result.results()) {
                String name = seriesName(first.benchmark(), impl.impl());
                double throughput =
                        opsPerSecond(impl.score(), impl.unit(), result.row().threads());
                if (throughput > 0 && Double.isFinite(throughput)) {
                    points.computeIfAbsent(name, n -> new TreeMap<>())
                            .put(result.row().threads(), throughput);
                }
            }
        }
        if (points.isEmpty()) {
            return Optional.empty();
        }
        List<ScalingChart.Series> series = new ArrayList<>();
        List<String> names = List.copyOf(points.keySet());
        points.forEach((name, byThreads) -> series.add(new ScalingChart.Series(
                name, colorOf(name, names), List.copyOf(byThreads.keySet()), List.copyOf(byThreads.values()))));
        DoubleSummaryStatistics range = series.stream()
                .flatMap(s -> s.throughput().stream())
                .mapToDouble(Double::doubleValue)
                .summaryStatistics();
        boolean logarithmic = range.getMax() / range.getMin() > LOG_SCALE_SPREAD;

        String title = suite.name() + ": " + first.label() + " - throughput vs threads"
                + (first.higherIsBetter() ? "" : " (from " + first.mode() + ")");
        String xAxisTitle = threads.size() == 1 ? "threads: " + threads.get(0) : "threads";
        String yAxisTitle = "throughput, ops/s, all threads" + (logarithmic ? " (log scale)" : "");
        return Optional.of(new ScalingChart(title, xAxisTitle, yAxisTitle, threads, series, logarithmic));
    }

    /** A score as operations per second of all threads, or NaN for an unknown unit. */
    static double opsPerSecond(double score, String unit, int threads) {
        String[] parts = unit.toLowerCase(Locale.ROOT).split("/");
        if (parts.length != 2) {
            return Double.NaN;
        }
        if (parts[0].equals("ops")) {
            return score / seconds(parts[1]);
        }
        if (parts[1].equals("op")) {
            return threads / (score * seconds(parts[0]));
        }
        return Double.NaN;
    }

    private static double seconds(String unit) {
        return switch (unit) {
            case "s" -> 1;
            case "ms" -> 1e-3;
            case "us" -> 1e-6;
            case "ns" -> 1e-9;
            case "min" -> 60;
            default -> Double.NaN;
        };
    }
}
