package io.refpool.bench.runner;

import java.awt.Color;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Builds the XChart panels of a suite's chart from its scaling rows.
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
    static final int WIDTH = 760;
    static final int HEIGHT = 420;
    static final double LOG_SCALE_SPREAD = 20;

    static final Color REFPOOL_COLOR = new Color(0xd6, 0x27, 0x28);
    private static final List<Color> PEER_COLORS = List.of(
            new Color(0x1f, 0x77, 0xb4),
            new Color(0x2c, 0xa0, 0x2c),
            new Color(0xff, 0x7f, 0x0e),
            new Color(0x94, 0x67, 0xbd),
            new Color(0x8c, 0x56, 0x4b),
            new Color(0x7f, 0x7f, 0x7f),
            new Color(0x17, 0xbe, 0xcf));

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

    /** The colour of an implementation: refpool's own, else a peer colour by position. */
    static Color colorOf(String impl, List<String> impls) {
        if (impl.equals(BenchmarkDescriptor.REFPOOL)) {
            return REFPOOL_COLOR;
        }
        List<String> peers = impls.stream()
                .filter(i -> !i.equals(BenchmarkDescriptor.REFPOOL))
                .toList();
        int index = Math.max(0, peers.indexOf(impl));
        return PEER_COLORS.get(index % PEER_COLORS.size());
    }

    private static Optional<ScalingChart> panel(SuiteResult suite, List<RowResult> rows) {
        Row first = rows.get(0).row();
        List<Integer> threads =
                rows.stream().map(r -> r.row().threads()).distinct().sorted().toList();
        Map<String, TreeMap<Integer, Double>> points = new LinkedHashMap<>();
        for (RowResult result : rows) {
            for (ImplResult impl : result.results()) {
                String name = impl.impl().equals(ImplResult.NO_IMPL) ? first.benchmark() : impl.impl();
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
        points.forEach((name, byThreads) -> series.add(new ScalingChart.Series(
                name, colorOf(name, first.impls()), List.copyOf(byThreads.keySet()), List.copyOf(byThreads.values()))));
        double max = series.stream()
                .flatMap(s -> s.throughput().stream())
                .mapToDouble(Double::doubleValue)
                .max()
                .orElse(1);
        double min = series.stream()
                .flatMap(s -> s.throughput().stream())
                .mapToDouble(Double::doubleValue)
                .min()
                .orElse(1);
        boolean logarithmic = max / min > LOG_SCALE_SPREAD;

        String title = suite.name() + ": " + first.label() + " - throughput vs threads"
                + (first.higherIsBetter() ? "" : " (from " + first.mode() + ")");
        XYChart xyChart = new XYChartBuilder()
                .width(WIDTH)
                .height(HEIGHT)
                .title(title)
                // a single thread count gets no tick (ticks fall on whole positions only), so name it
                .xAxisTitle(threads.size() == 1 ? "threads: " + threads.get(0) : "threads")
                .yAxisTitle("throughput, ops/s, all threads" + (logarithmic ? " (log scale)" : ""))
                .build();
        xyChart.getStyler().setLegendPosition(LegendPosition.InsideNW);
        xyChart.getStyler().setXAxisMin(-0.25);
        xyChart.getStyler().setXAxisMax(threads.size() - 0.75);
        ScalingChart chart = new ScalingChart(title, xyChart, series, logarithmic);
        xyChart.setCustomXAxisTickLabelsFormatter(position -> chart.drawn(threadsAt(position, threads)));
        // XChart's own log axis labels ticks with its internal formatter; plotting log10 values on a
        // linear axis keeps every label ours (and so text in the SVG)
        xyChart.setCustomYAxisTickLabelsFormatter(
                value -> chart.drawn(tickLabel(logarithmic ? Math.pow(10, value) : value)));
        for (ScalingChart.Series line : series) {
            double[] x = line.threads().stream().mapToDouble(threads::indexOf).toArray();
            double[] y = line.throughput().stream()
                    .mapToDouble(v -> logarithmic ? Math.log10(v) : v)
                    .toArray();
            XYSeries xySeries = xyChart.addSeries(line.name(), x, y);
            xySeries.setLineColor(line.color());
            xySeries.setMarkerColor(line.color());
            xySeries.setMarker(SeriesMarkers.CIRCLE);
        }
        return Optional.of(chart);
    }

    /** A y tick label: three significant digits with an SI suffix, trailing zeros dropped ("1.2G"). */
    static String tickLabel(double value) {
        return Numbers.short3(value);
    }

    /**
     * The label at an x axis position: the thread count of the nearest plotted position. XChart
     * widens the tick spacing while neighbouring labels repeat, so the half steps (which repeat
     * their neighbour) drop out and one tick per thread count remains. Positions outside the plot
     * get a distinct label that can never repeat a thread count; an empty label would hide the
     * whole axis, and a repeated one would keep XChart widening forever.
     */
    static String threadsAt(double position, List<Integer> threads) {
        long index = Math.round(position);
        if (index < 0 || index >= threads.size()) {
            return "(" + index + ")";
        }
        return String.valueOf(threads.get((int) index));
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
