package io.refpool.bench.runner;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * One panel of a suite's chart: a scaling benchmark at one parameter combination, one series per
 * implementation, throughput of all threads against threads.
 *
 * <pre>{@code
 * ScalingChart chart = ScalingCharts.build(attach).get(0);
 * chart.title();         // "attach: nested state=sparse - throughput vs threads"
 * chart.description();   // "refpool: 1 -> 105.0M, 2 -> 210.0M; swap-flag: ..."
 * }</pre>
 *
 * @param title the panel's heading
 * @param xAxisTitle the words under the thread axis
 * @param yAxisTitle the words beside the throughput axis
 * @param threads the thread counts of the x axis, ascending, drawn at equal distances
 * @param series the lines, in legend order
 * @param logarithmic whether the throughput axis is logarithmic
 */
record ScalingChart(
        String title,
        String xAxisTitle,
        String yAxisTitle,
        List<Integer> threads,
        List<Series> series,
        boolean logarithmic) {

    /**
     * One line of the panel.
     *
     * @param name the implementation (or the benchmark, in a single-implementation row)
     * @param color the line's colour, as {@code #rrggbb}
     * @param threads the thread counts, ascending
     * @param throughput operations per second of all threads together, per thread count
     */
    record Series(String name, String color, List<Integer> threads, List<Double> throughput) {
        Series {
            threads = List.copyOf(threads);
            throughput = List.copyOf(throughput);
        }
    }

    ScalingChart {
        threads = List.copyOf(threads);
        series = List.copyOf(series);
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
