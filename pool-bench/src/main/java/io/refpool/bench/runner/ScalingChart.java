package io.refpool.bench.runner;

import java.awt.Color;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.knowm.xchart.XYChart;

/**
 * One panel of a suite's chart: a scaling benchmark at one parameter combination, one series per
 * implementation, throughput of all threads against threads.
 *
 * <pre>{@code
 * ScalingChart chart = ScalingCharts.build(attach).get(0);
 * chart.xyChart().paint(new TextKeepingGraphics(chart.texts()), ScalingCharts.WIDTH, ScalingCharts.HEIGHT);
 * }</pre>
 *
 * <p>Besides the XChart chart it keeps every string the chart may draw — titles, series names and,
 * as the chart is painted, each tick label its formatters produce — so that {@link
 * TextKeepingGraphics} can write them to the SVG as text.
 */
final class ScalingChart {
    private final String title;
    private final XYChart xyChart;
    private final List<Series> series;
    private final boolean logarithmic;
    private final Set<String> texts = new LinkedHashSet<>();

    /**
     * One line of the panel.
     *
     * @param name the implementation (or the benchmark, in a single-implementation row)
     * @param color the line's colour
     * @param threads the thread counts, ascending
     * @param throughput operations per second of all threads together, per thread count
     */
    record Series(String name, Color color, List<Integer> threads, List<Double> throughput) {
        Series {
            threads = List.copyOf(threads);
            throughput = List.copyOf(throughput);
        }
    }

    ScalingChart(String title, XYChart xyChart, List<Series> series, boolean logarithmic) {
        this.title = title;
        this.xyChart = xyChart;
        this.series = List.copyOf(series);
        this.logarithmic = logarithmic;
        texts.add(title);
        texts.add(xyChart.getXAxisTitle());
        texts.add(xyChart.getYAxisTitle());
        series.forEach(line -> texts.add(line.name()));
    }

    String title() {
        return title;
    }

    XYChart xyChart() {
        return xyChart;
    }

    List<Series> series() {
        return series;
    }

    boolean logarithmic() {
        return logarithmic;
    }

    /** Remembers a string the chart draws; the tick formatters call it while XChart paints. */
    String drawn(String text) {
        if (!text.isEmpty()) {
            texts.add(text);
        }
        return text;
    }

    /** The strings this chart may draw, growing while it is painted. */
    Set<String> texts() {
        return Collections.unmodifiableSet(texts);
    }

    /** The plotted values in words, e.g. "refpool: 1 -> 120M, 2 -> 231M; swap-flag: ...". */
    String description() {
        return series.stream()
                .map(line -> line.name() + ": "
                        + IntStream.range(0, line.threads().size())
                                .mapToObj(i -> line.threads().get(i) + " -> "
                                        + Numbers.compact(line.throughput().get(i)))
                                .collect(Collectors.joining(", ")))
                .collect(Collectors.joining("; "));
    }
}
