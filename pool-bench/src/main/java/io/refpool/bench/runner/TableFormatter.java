package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.annotations.Mode;

/**
 * Formats a suite's results as a plain-text table for a 100–140 column terminal.
 *
 * <pre>{@code
 * String table = new TableFormatter(Runtime.getRuntime().availableProcessors()).format(attach);
 * }</pre>
 *
 * <p>One line per implementation, grouped by row, rather than one column group per
 * implementation: the width then depends on the row key, not on how many peers a suite compares,
 * and a suite with four implementations still fits. A row's first line carries its key (benchmark,
 * parameters, threads; the benchmark and parameters only when they change); refpool comes first,
 * and every peer's line ends with refpool's speedup over it, "1.63x [1.55-1.71]": the median of
 * the per-fork ratios and their range (see {@link Ratio}). Thread counts above the machine's cores
 * carry a {@code *} and a footnote. The p50/p99 columns appear only when a row is SampleTime, the
 * B/op column only when the GC profiler reported allocation. Output is ASCII only.
 */
final class TableFormatter {
    private static final String COLUMN_GAP = "  ";
    private static final int PARAMS_COLUMN = 2;
    private static final int IMPL_COLUMN = 4;

    private final int cores;

    TableFormatter(int cores) {
        this.cores = cores;
    }

    String format(SuiteResult suite) {
        boolean sampled = suite.rows().stream().anyMatch(r -> r.row().mode() == Mode.SampleTime);
        boolean allocation =
                suite.rows().stream().flatMap(r -> r.results().stream()).anyMatch(i -> !Double.isNaN(i.bytesPerOp()));
        boolean compared = suite.rows().stream().anyMatch(r -> r.row().impls().size() > 1);
        boolean oversubscribed = suite.rows().stream().anyMatch(r -> r.row().threads() > cores);

        boolean withParams =
                suite.rows().stream().anyMatch(r -> !r.row().params().isEmpty());
        boolean withImpls = suite.rows().stream().anyMatch(r -> !r.row().impls().isEmpty());

        List<Column> columns = new ArrayList<>();
        columns.add(new Column("benchmark", false));
        columns.add(new Column("mode", false));
        columns.add(new Column("params", false));
        columns.add(new Column("threads", true));
        columns.add(new Column("impl", false));
        columns.add(new Column("score", true));
        columns.add(new Column("error", true));
        columns.add(new Column("unit", false));
        if (sampled) {
            columns.add(new Column("p50", true));
            columns.add(new Column("p99", true));
        }
        boolean forkedAllocation = allocation
                && suite.rows().stream()
                        .flatMap(r -> r.results().stream())
                        .anyMatch(i -> i.forkBytesPerOp().size() > 1);
        if (allocation) {
            columns.add(new Column("B/op", true));
        }
        if (forkedAllocation) {
            columns.add(new Column("B/op by fork", false));
        }
        boolean churn = suite.rows().stream()
                .flatMap(r -> r.results().stream())
                .anyMatch(i -> !Double.isNaN(i.creationsPer1k()));
        if (churn) {
            columns.add(new Column("creations/1k", true));
        }
        boolean cpu = suite.rows().stream()
                .flatMap(r -> r.results().stream())
                .anyMatch(i -> !Double.isNaN(i.cpuNanosPerOp()));
        if (cpu) {
            columns.add(new Column("cpu ns/op", true));
        }
        if (compared) {
            columns.add(new Column("refpool speedup", false));
        }

        List<List<String>> lines = new ArrayList<>();
        String previousKey = null;
        for (RowResult result : suite.rows()) {
            Row row = result.row();
            String key = row.benchmark() + " " + row.mode() + " " + row.paramsText();
            boolean newKey = !key.equals(previousKey);
            if (previousKey != null && newKey && compared) {
                lines.add(List.of());
            }
            boolean first = true;
            for (ImplResult impl : result.results()) {
                List<String> cells = keyCells(row, first, newKey);
                cells.add(impl.impl().equals(ImplResult.NO_IMPL) ? "-" : impl.impl());
                cells.add(Numbers.compact(impl.score()));
                cells.add(Numbers.compact(impl.error()));
                cells.add(impl.unit());
                if (sampled) {
                    cells.add(Numbers.compact(impl.p50()));
                    cells.add(Numbers.compact(impl.p99()));
                }
                if (allocation) {
                    cells.add(Numbers.bytes(impl.bytesPerOp()));
                }
                if (forkedAllocation) {
                    cells.add(byFork(impl.forkBytesPerOp()));
                }
                if (churn) {
                    cells.add(
                            Double.isNaN(impl.creationsPer1k())
                                    ? ""
                                    : String.format(Locale.ROOT, "%.1f", impl.creationsPer1k()));
                }
                if (cpu) {
                    cells.add(Double.isNaN(impl.cpuNanosPerOp()) ? "" : Numbers.compact(impl.cpuNanosPerOp()));
                }
                if (compared) {
                    cells.add(result.ratio(impl).map(TableFormatter::speedup).orElse(""));
                }
                lines.add(cells);
                first = false;
            }
            for (String failed : result.failed()) {
                List<String> cells = keyCells(row, first, newKey);
                cells.add(failed);
                cells.add("failed");
                while (cells.size() < columns.size()) {
                    cells.add("");
                }
                lines.add(cells);
                first = false;
            }
            previousKey = key;
        }

        StringBuilder table = new StringBuilder();
        table.append(suite.name()).append(" (").append(suite.benchmarkClass()).append(')');
        table.append(": ").append(suite.rows().size()).append(suite.rows().size() == 1 ? " row" : " rows");
        table.append(", error = 99.9% confidence half-width\n");
        if (compared) {
            table.append(
                    "refpool speedup = how many times faster refpool is than that impl: refpool/peer for ops/s,\n");
            table.append(
                    "  peer/refpool for ns/op; median of the per-fork ratios [min-max]; above 1 = refpool faster\n");
        }
        if (!withParams || !withImpls) {
            // a column nobody fills is noise: the floor has neither parameters nor implementations
            List<Integer> dropped = new ArrayList<>();
            if (!withImpls) {
                dropped.add(IMPL_COLUMN);
            }
            if (!withParams) {
                dropped.add(PARAMS_COLUMN);
            }
            for (int index : dropped) {
                columns.remove(index);
                lines.forEach(cells -> {
                    if (!cells.isEmpty()) {
                        cells.remove(index);
                    }
                });
            }
        }
        int[] widths = widths(columns, lines);
        table.append(line(columns.stream().map(Column::header).toList(), columns, widths));
        for (List<String> cells : lines) {
            table.append(cells.isEmpty() ? "\n" : line(cells, columns, widths));
        }
        if (oversubscribed) {
            table.append("* oversubscribed: more threads than the ")
                    .append(cores)
                    .append(" cores of this machine\n");
        }
        return table.toString();
    }

    /** The benchmark, mode, params and threads cells: on a row's first line only, the first two only when new. */
    private List<String> keyCells(Row row, boolean firstLine, boolean newKey) {
        List<String> cells = new ArrayList<>();
        cells.add(firstLine && newKey ? row.benchmark() : "");
        cells.add(firstLine && newKey ? row.mode().shortLabel() : "");
        cells.add(firstLine && newKey ? row.paramsText() : "");
        cells.add(firstLine ? row.threads() + (row.threads() > cores ? "*" : "") : "");
        return cells;
    }

    private static String speedup(Ratio ratio) {
        String median = Numbers.ratio(ratio.median()) + "x";
        if (ratio.forks() < 2) {
            return median;
        }
        return median + " [" + Numbers.ratio(ratio.min()) + "-" + Numbers.ratio(ratio.max()) + "]";
    }

    private static int[] widths(List<Column> columns, List<List<String>> lines) {
        int[] widths = new int[columns.size()];
        for (int c = 0; c < columns.size(); c++) {
            widths[c] = columns.get(c).header().length();
            for (List<String> cells : lines) {
                if (!cells.isEmpty()) {
                    widths[c] = Math.max(widths[c], cells.get(c).length());
                }
            }
        }
        return widths;
    }

    private static String line(List<String> cells, List<Column> columns, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < columns.size(); c++) {
            String cell = cells.get(c);
            String padding = " ".repeat(widths[c] - cell.length());
            line.append(c == 0 ? "" : COLUMN_GAP);
            line.append(columns.get(c).rightAligned() ? padding + cell : cell + padding);
        }
        return line.toString().stripTrailing() + "\n";
    }

    /** A table column: its header and how its cells align. */
    private record Column(String header, boolean rightAligned) {}

    /** {@return each fork's bytes/op, whole bytes, in fork order: "0/0/32/0"} */
    static String byFork(List<Double> bytes) {
        if (bytes.size() < 2) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        for (double b : bytes) {
            if (text.length() > 0) {
                text.append('/');
            }
            text.append(Double.isNaN(b) ? "?" : String.valueOf(Math.round(b)));
        }
        return text.toString();
    }
}
