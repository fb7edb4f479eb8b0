package io.refpool.bench.runner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Locale;

/**
 * Writes a suite's scaling panels as one SVG file ({@code <suite>.svg}), panels stacked top to
 * bottom.
 *
 * <pre>{@code
 * SvgChartWriter.write("attach: throughput vs threads", ScalingCharts.build(attach), out.resolve("attach.svg"));
 * }</pre>
 *
 * <p>Each panel is a nested {@code <svg>} element with a {@code <title>}, a {@code <desc>} listing
 * the plotted values, and the chart: title, a plot with dashed grid lines at the ticks, thread
 * counts at equal distances on the x axis, throughput on the y axis (ticks at a round step of the
 * value or, on a logarithmic axis, of its logarithm, so 10M, 31.6M, 100M), one line with round
 * markers per series, and a legend in the plot's top left corner. Every word is a {@code <text>}
 * element, so the file is searchable and readable by tests and screen readers.
 */
final class SvgChartWriter {
    static final String SVG_NS = "http://www.w3.org/2000/svg";
    static final int WIDTH = 760;
    static final int HEIGHT = 420;

    private static final double PLOT_LEFT = 82;
    private static final double PLOT_TOP = 34;
    private static final double PLOT_RIGHT = WIDTH - 10;
    private static final double PLOT_BOTTOM = HEIGHT - 52;
    private static final int TARGET_TICKS = 5;
    private static final String FONT = "DejaVu Sans,Arial,Helvetica,sans-serif";
    private static final String FRAME = "stroke=\"#828282\"";
    private static final String GRID = "stroke=\"#c8c8c8\" stroke-dasharray=\"3,3\"";
    private static final String CENTERED = "text-anchor=\"middle\"";
    private static final String BOLD_CENTERED = CENTERED + " font-weight=\"bold\"";

    private SvgChartWriter() {}

    static void write(String title, List<ScalingChart> panels, Path file) throws IOException {
        Files.writeString(file, render(title, panels));
    }

    static String render(String title, List<ScalingChart> panels) {
        int height = HEIGHT * panels.size();
        StringBuilder svg = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"%s\" version=\"1.1\" width=\"%2$dpx\" height=\"%3$dpx\" viewBox=\"0 0 %2$d %3$d\""
                        + " font-family=\"%4$s\" font-size=\"12\">\n<title>%5$s</title>\n",
                SVG_NS,
                WIDTH,
                height,
                FONT,
                escape(title)));
        for (int i = 0; i < panels.size(); i++) {
            panel(svg, panels.get(i), i);
        }
        return svg.append("</svg>\n").toString();
    }

    private static void panel(StringBuilder svg, ScalingChart chart, int index) {
        svg.append(String.format(
                Locale.ROOT,
                "<svg id=\"panel-%d\" x=\"0\" y=\"%d\" width=\"%3$d\" height=\"%4$d\" viewBox=\"0 0 %3$d %4$d\">\n"
                        + "<title>%5$s</title>\n<desc>throughput, ops/s, by threads: %6$s</desc>\n",
                index + 1,
                index * HEIGHT,
                WIDTH,
                HEIGHT,
                escape(chart.title()),
                escape(chart.description())));
        rect(svg, 0, 0, WIDTH, HEIGHT, "fill=\"#d2d2d2\"");
        text(svg, WIDTH / 2.0, 22, BOLD_CENTERED + " font-size=\"14\"", chart.title());
        double plotWidth = PLOT_RIGHT - PLOT_LEFT;
        double plotHeight = PLOT_BOTTOM - PLOT_TOP;
        rect(svg, PLOT_LEFT, PLOT_TOP, plotWidth, plotHeight, "fill=\"#ffffff\"");

        ValueAxis y = ValueAxis.of(chart);
        for (double tick : y.ticks()) {
            double at = y.pixel(tick);
            line(svg, PLOT_LEFT, at, PLOT_RIGHT, at, GRID);
            text(svg, PLOT_LEFT - 6, at + 4, "text-anchor=\"end\"", Numbers.short3(y.value(tick)));
        }
        for (int i = 0; i < chart.threads().size(); i++) {
            double at = xPixel(i, chart.threads().size());
            line(svg, at, PLOT_TOP, at, PLOT_BOTTOM, GRID);
            text(
                    svg,
                    at,
                    PLOT_BOTTOM + 17,
                    CENTERED,
                    String.valueOf(chart.threads().get(i)));
        }
        rect(svg, PLOT_LEFT, PLOT_TOP, plotWidth, plotHeight, "fill=\"none\" " + FRAME);
        text(svg, PLOT_LEFT + plotWidth / 2, HEIGHT - 12, BOLD_CENTERED, chart.xAxisTitle());
        String turned = String.format(Locale.ROOT, " transform=\"rotate(-90 22 %.1f)\"", PLOT_TOP + plotHeight / 2);
        text(svg, 22, PLOT_TOP + plotHeight / 2, BOLD_CENTERED + turned, chart.yAxisTitle());

        for (ScalingChart.Series line : chart.series()) {
            List<String> points = new ArrayList<>();
            StringBuilder markers = new StringBuilder();
            for (int i = 0; i < line.threads().size(); i++) {
                double x = xPixel(
                        chart.threads().indexOf(line.threads().get(i)),
                        chart.threads().size());
                double at = y.pixel(y.tickSpace(line.throughput().get(i)));
                points.add(number(x) + "," + number(at));
                circle(markers, x, at, line.color());
            }
            svg.append(String.format(
                            "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                            String.join(" ", points), line.color()))
                    .append(markers);
        }
        legend(svg, chart.series());
        svg.append("</svg>\n");
    }

    /** The series names in a white box in the plot's top left corner, each beside its line. */
    private static void legend(StringBuilder svg, List<ScalingChart.Series> series) {
        double left = PLOT_LEFT + 6;
        double top = PLOT_TOP + 6;
        double rowHeight = 19.5;
        int longestName = series.stream().mapToInt(s -> s.name().length()).max().orElse(0);
        svg.append("<g class=\"legend\">\n");
        rect(svg, left, top, 54 + longestName * 6.6, 10 + rowHeight * series.size(), "fill=\"#ffffff\" " + FRAME);
        for (int i = 0; i < series.size(); i++) {
            ScalingChart.Series line = series.get(i);
            double middle = top + 15 + i * rowHeight;
            line(svg, left + 10, middle, left + 34, middle, "stroke=\"" + line.color() + "\" stroke-width=\"2\"");
            circle(svg, left + 22, middle, line.color());
            text(svg, left + 44, middle + 4, "font-size=\"11\"", line.name());
        }
        svg.append("</g>\n");
    }

    /** Thread counts at equal distances, a quarter step of margin at either end. */
    private static double xPixel(int index, int count) {
        return PLOT_LEFT + (index + 0.25) / (count - 0.5) * (PLOT_RIGHT - PLOT_LEFT);
    }

    private static void line(StringBuilder svg, double x1, double y1, double x2, double y2, String style) {
        svg.append(String.format(
                "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" %s/>\n",
                number(x1), number(y1), number(x2), number(y2), style));
    }

    private static void rect(StringBuilder svg, double x, double y, double width, double height, String style) {
        svg.append(String.format(
                "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" %s/>\n",
                number(x), number(y), number(width), number(height), style));
    }

    private static void circle(StringBuilder svg, double x, double y, String color) {
        svg.append(String.format("<circle cx=\"%s\" cy=\"%s\" r=\"4\" fill=\"%s\"/>\n", number(x), number(y), color));
    }

    private static void text(StringBuilder svg, double x, double y, String style, String words) {
        svg.append(String.format("<text x=\"%s\" y=\"%s\" %s>%s</text>\n", number(x), number(y), style, escape(words)));
    }

    /** A coordinate to a tenth of a pixel. */
    private static String number(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }

    /**
     * The throughput axis, in tick space: the value itself, or its base-10 logarithm on a
     * logarithmic axis. The range is the data's, widened by a twentieth of it at either end; the
     * ticks are the multiples of a round step (1, 2 or 5 times a power of ten) inside it.
     */
    private record ValueAxis(boolean logarithmic, double low, double high, double step) {
        static ValueAxis of(ScalingChart chart) {
            DoubleSummaryStatistics range = chart.series().stream()
                    .flatMap(line -> line.throughput().stream())
                    .mapToDouble(value -> chart.logarithmic() ? Math.log10(value) : value)
                    .summaryStatistics();
            double min = range.getMin();
            double max = range.getMax();
            double span = max - min;
            if (span <= 0) {
                // one value: give it room, half a decade or a tenth of itself either side
                span = chart.logarithmic() ? 1 : Math.max(Math.abs(max) / 5, 1);
                min -= span / 2;
                max += span / 2;
            }
            double raw = span / TARGET_TICKS;
            double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
            double step = 10 * magnitude;
            for (double multiple : new double[] {1, 2, 5}) {
                if (multiple * magnitude >= raw) {
                    step = multiple * magnitude;
                    break;
                }
            }
            return new ValueAxis(chart.logarithmic(), min - span / 20, max + span / 20, step);
        }

        double tickSpace(double value) {
            return logarithmic ? Math.log10(value) : value;
        }

        double value(double tick) {
            return logarithmic ? Math.pow(10, tick) : tick;
        }

        List<Double> ticks() {
            List<Double> ticks = new ArrayList<>();
            for (long k = (long) Math.ceil(low / step); k * step <= high; k++) {
                ticks.add(k * step);
            }
            return ticks;
        }

        double pixel(double tick) {
            return PLOT_BOTTOM - (tick - low) / (high - low) * (PLOT_BOTTOM - PLOT_TOP);
        }
    }
}
