package io.refpool.bench.runner;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;

/**
 * Writes the raw JMH results of a suite ({@code <suite>.json}) in JMH's own JSON format, so any
 * JMH tool (e.g. a JMH visualizer) reads them.
 *
 * <pre>{@code
 * JsonResultsWriter.write(outcome.rawResults(), out.resolve("attach.json"));
 * }</pre>
 *
 * <p>The file is one array with an entry per JMH run, in execution order: every fork of every
 * implementation is its own entry ({@code "forks": 1}), told apart by its parameters ({@code
 * impl}) and its position (fork 1 of each implementation comes before fork 2).
 */
final class JsonResultsWriter {
    private JsonResultsWriter() {}

    static void write(List<RunResult> results, Path file) throws IOException {
        try (OutputStream stream = Files.newOutputStream(file);
                PrintStream out = new PrintStream(stream, false, StandardCharsets.UTF_8)) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, out).writeOut(results);
            if (out.checkError()) {
                throw new IOException("cannot write " + file);
            }
        }
    }
}
