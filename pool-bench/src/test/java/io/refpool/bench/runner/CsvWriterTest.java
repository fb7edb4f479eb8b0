package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;

class CsvWriterTest {
    private static final double EPSILON = 1e-9;

    @TempDir
    Path directory;

    private List<Map<String, String>> writeAndReadBack(SuiteResult suite) throws IOException {
        Path file = directory.resolve(suite.name() + ".csv");
        new CsvWriter(2).write(suite, file);
        String text = Files.readString(file, StandardCharsets.UTF_8);
        assertTrue(text.endsWith("\r\n"));
        List<List<String>> records = parse(text);
        assertEquals(CsvWriter.HEADER, records.get(0));
        List<Map<String, String>> rows = new ArrayList<>();
        for (List<String> record : records.subList(1, records.size())) {
            assertEquals(CsvWriter.HEADER.size(), record.size(), record.toString());
            Map<String, String> row = new java.util.LinkedHashMap<>();
            for (int i = 0; i < record.size(); i++) {
                row.put(CsvWriter.HEADER.get(i), record.get(i));
            }
            rows.add(row);
        }
        return rows;
    }

    private static Map<String, String> find(
            List<Map<String, String>> rows, String benchmark, String threads, String impl) {
        return rows.stream()
                .filter(r -> r.get("benchmark").equals(benchmark)
                        && r.get("threads").equals(threads)
                        && r.get("impl").equals(impl))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void oneLinePerRowAndMeasuredImplementation() throws IOException {
        List<Map<String, String>> rows = writeAndReadBack(CannedResults.attachSuite());
        assertEquals(3 * 3 + 2, rows.size());
        assertTrue(rows.stream().allMatch(r -> r.get("suite").equals("attach")));
    }

    @Test
    void numbersRoundTripAtFullPrecision() throws IOException {
        Map<String, String> refpool = find(writeAndReadBack(CannedResults.attachSuite()), "nested", "2", "refpool");
        assertEquals(210e6, Double.parseDouble(refpool.get("score")), EPSILON);
        assertEquals(2.1e6, Double.parseDouble(refpool.get("error")), EPSILON);
        assertEquals("ops/s", refpool.get("unit"));
        assertEquals("thrpt", refpool.get("mode"));
        assertEquals("state=sparse", refpool.get("params"));
        assertEquals("0", refpool.get("bytes_per_op"));
        assertEquals("2", refpool.get("forks"));
        assertEquals("", refpool.get("p50"));
        assertEquals("", refpool.get("ratio_median"));
    }

    @Test
    void peerLinesCarryRefpoolsSpeedupMedianMinAndMax() throws IOException {
        List<Map<String, String>> rows = writeAndReadBack(CannedResults.attachSuite());
        Map<String, String> swapFlag = find(rows, "nested", "4", "swap-flag");
        assertEquals(33.6, Double.parseDouble(swapFlag.get("ratio_median")), EPSILON);
        assertEquals(32.0, Double.parseDouble(swapFlag.get("ratio_min")), EPSILON);
        assertEquals(35.2, Double.parseDouble(swapFlag.get("ratio_max")), EPSILON);
        assertEquals("true", swapFlag.get("oversubscribed"));
        assertEquals("false", find(rows, "nested", "2", "swap-flag").get("oversubscribed"));

        Map<String, String> sampled = find(rows, "acquireRelease", "1", "swap-flag");
        assertEquals("sample", sampled.get("mode"));
        assertEquals(55.0, Double.parseDouble(sampled.get("p50")), EPSILON);
        assertEquals(120.0, Double.parseDouble(sampled.get("p99")), EPSILON);
        assertEquals(24.0, Double.parseDouble(sampled.get("bytes_per_op")), EPSILON);
        assertEquals("0;48", sampled.get("bytes_per_op_by_fork"), "each fork's allocation, so a split shows");
        assertEquals(3.0, Double.parseDouble(sampled.get("ratio_median")), EPSILON);
    }

    @Test
    void fieldsWithCommasOrQuotesAreQuoted() throws IOException {
        Row row = new Row(
                "pool",
                "io.refpool.bench.PoolBenchmark",
                "acquire",
                Mode.Throughput,
                new java.util.TreeMap<>(Map.of("keys", "a,\"b\"")),
                1,
                false,
                List.of("refpool"),
                List.of());
        SuiteResult suite = new SuiteResult(
                "pool",
                "PoolBenchmark",
                List.of(new RowResult(row, List.of(CannedResults.thrpt("refpool", 5.0)), List.of())));
        Map<String, String> line = writeAndReadBack(suite).get(0);
        assertEquals("keys=a,\"b\"", line.get("params"));
        assertEquals(5.0, Double.parseDouble(line.get("score")), EPSILON);
    }

    /** An RFC 4180 reader, small and strict, written for this test. */
    private static List<List<String>> parse(String text) {
        List<List<String>> records = new ArrayList<>();
        List<String> record = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < text.length() && text.charAt(i + 1) == '"') {
                    field.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    field.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                record.add(field.toString());
                field.setLength(0);
            } else if (c == '\r' && text.charAt(i + 1) == '\n') {
                record.add(field.toString());
                field.setLength(0);
                records.add(record);
                record = new ArrayList<>();
                i++;
            } else {
                field.append(c);
            }
        }
        return records;
    }
}
