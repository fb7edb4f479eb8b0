package io.refpool.bench.runner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a suite's result files into the result directory: {@code <suite>.json}, {@code
 * <suite>.csv} and, when the suite has scaling benchmarks, {@code <suite>.svg}.
 *
 * <pre>{@code
 * List<Path> written = new ReportFiles(out, cores).write(outcome);
 * }</pre>
 */
final class ReportFiles {
    private final Path directory;
    private final int cores;

    ReportFiles(Path directory, int cores) {
        this.directory = directory;
        this.cores = cores;
    }

    /** Writes the files and returns them, in the order JSON, CSV, SVG. */
    List<Path> write(SuiteOutcome outcome) throws IOException {
        SuiteResult suite = outcome.result();
        List<Path> written = new ArrayList<>();
        Path json = directory.resolve(suite.name() + ".json");
        JsonResultsWriter.write(outcome.rawResults(), json);
        written.add(json);
        Path csv = directory.resolve(suite.name() + ".csv");
        new CsvWriter(cores).write(suite, csv);
        written.add(csv);
        List<ScalingChart> panels = ScalingCharts.build(suite);
        if (!panels.isEmpty()) {
            Path svg = directory.resolve(suite.name() + ".svg");
            SvgChartWriter.write(
                    suite.name() + " (" + suite.benchmarkClass() + "): throughput vs threads", panels, svg);
            written.add(svg);
        }
        return written;
    }
}
