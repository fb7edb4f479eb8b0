package io.refpool.bench.runner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Writes a suite's table as CSV ({@code <suite>.csv}): one line per row × implementation.
 *
 * <pre>{@code
 * new CsvWriter(cores).write(attach, out.resolve("attach.csv"));
 * }</pre>
 *
 * <p>Columns: {@code suite, benchmark, mode, params, threads, oversubscribed, impl, score, error,
 * unit, p50, p99, bytes_per_op, forks, bytes_per_op_by_fork, ratio_median, ratio_min, ratio_max,
 * creations_per_1k, cpu_ns_per_op} ({@link #HEADER}; the last two only from benchmarks that count
 * them). {@code mode} is JMH's
 * short label ({@code thrpt}, {@code avgt}, {@code sample}); {@code params} holds the non-impl
 * parameters as space-separated {@code name=value}; numbers are plain decimals with full precision,
 * and an absent number is an empty field. The ratio is refpool's speedup over that line's
 * implementation as in the table (above 1 = refpool faster; refpool ÷ peer for throughput, peer ÷
 * refpool for times), empty on refpool's own line and in single-implementation rows. Fields are
 * quoted per RFC 4180 when they hold a comma, a quote or a line break; lines end with CRLF.
 */
final class CsvWriter {
    static final List<String> HEADER = List.of(
            "suite",
            "benchmark",
            "mode",
            "params",
            "threads",
            "oversubscribed",
            "impl",
            "score",
            "error",
            "unit",
            "p50",
            "p99",
            "bytes_per_op",
            "forks",
            "bytes_per_op_by_fork",
            "ratio_median",
            "ratio_min",
            "ratio_max",
            "creations_per_1k",
            "cpu_ns_per_op");

    private final int cores;

    CsvWriter(int cores) {
        this.cores = cores;
    }

    void write(SuiteResult suite, Path file) throws IOException {
        Files.writeString(file, format(suite), StandardCharsets.UTF_8);
    }

    String format(SuiteResult suite) {
        StringBuilder csv = new StringBuilder();
        csv.append(line(HEADER));
        for (RowResult result : suite.rows()) {
            Row row = result.row();
            for (ImplResult impl : result.results()) {
                Optional<Ratio> ratio = result.ratio(impl);
                csv.append(line(List.of(
                        suite.name(),
                        row.benchmark(),
                        row.mode().shortLabel(),
                        row.paramsText(),
                        String.valueOf(row.threads()),
                        String.valueOf(row.threads() > cores),
                        impl.impl(),
                        Numbers.exact(impl.score()),
                        Numbers.exact(impl.error()),
                        impl.unit(),
                        Numbers.exact(impl.p50()),
                        Numbers.exact(impl.p99()),
                        Numbers.exact(impl.bytesPerOp()),
                        String.valueOf(impl.forkScores().size()),
                        impl.forkBytesPerOp().stream().map(Numbers::exact).collect(Collectors.joining(";")),
                        ratio.map(r -> Numbers.exact(r.median())).orElse(""),
                        ratio.map(r -> Numbers.exact(r.min())).orElse(""),
                        ratio.map(r -> Numbers.exact(r.max())).orElse(""),
                        Numbers.exact(impl.creationsPer1k()),
                        Numbers.exact(impl.cpuNanosPerOp()))));
            }
        }
        return csv.toString();
    }

    private static String line(List<String> fields) {
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) {
                line.append(',');
            }
            line.append(quote(fields.get(i)));
        }
        return line.append("\r\n").toString();
    }

    private static String quote(String field) {
        if (field.contains(",") || field.contains("\"") || field.contains("\n") || field.contains("\r")) {
            return '"' + field.replace("\"", "\"\"") + '"';
        }
        return field;
    }
}
