package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * Runs the floor end to end through the runner, with real JMH forks: the smallest measurement that
 * proves discovery, planning, execution, tables and files fit together.
 */
class BenchRunnerSmokeTest {
    @TempDir
    Path directory;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return BenchRunner.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void theFloorRunsThroughJmhAndIsReported() throws Exception {
        Path results = directory.resolve("results");
        int status = run("floor", "--smoke", "--threads", "1,2", "--out", results.toString());

        String console = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, console + err.toString(StandardCharsets.UTF_8));
        assertTrue(console.contains("[1/7] floor acquireLoad threads=1 fork 1/1"), console);
        assertTrue(console.contains("[4/7] floor lockUnlockUncontended threads=1 fork 1/1"), console);
        assertTrue(console.contains("floor (FloorBenchmark): 9 rows"), console);
        for (String benchmark :
                List.of("acquireLoad", "casUncontended", "lockUnlockUncontended", "pingPong", "threadLocalGet")) {
            assertTrue(console.lines().anyMatch(line -> line.startsWith(benchmark) && line.contains("ns/op")), console);
        }
        assertTrue(console.contains("machine: " + Runtime.getRuntime().availableProcessors() + " cores"), console);

        String json = Files.readString(results.resolve("floor.json"));
        assertTrue(json.strip().startsWith("[") && json.strip().endsWith("]"), json);
        assertTrue(json.contains("\"benchmark\" : \"io.refpool.bench.FloorBenchmark.acquireLoad\""), json);
        assertTrue(json.contains("gc.alloc.rate.norm"), json);
        assertTrue(json.contains("\"threads\" : 2,"), "acquireLoad scales to 2 threads: " + json);

        List<String> csv = Files.readAllLines(results.resolve("floor.csv"));
        // seven rows, and the two threads of the pingPong group on lines of their own
        assertEquals(1 + 7 + 2, csv.size(), csv.toString());
        for (String role : List.of("floor,ping,avgt,", "floor,pong,avgt,")) {
            assertTrue(csv.stream().anyMatch(line -> line.startsWith(role)), csv.toString());
        }
        assertTrue(csv.get(1).startsWith("floor,acquireLoad,avgt,,1,"), csv.toString());
        double score = Double.parseDouble(csv.get(1).split(",")[7]);
        assertTrue(score > 0, csv.toString());

        Document svg = SvgDocuments.parse(results.resolve("floor.svg"));
        assertEquals(
                "floor (FloorBenchmark): throughput vs threads",
                svg.getElementsByTagNameNS(SvgChartWriter.SVG_NS, "title")
                        .item(0)
                        .getTextContent());
        assertTrue(Files.readString(results.resolve("jmh.log")).contains("# refpool bench: floor acquireLoad"));
    }

    @Test
    void listNamesEveryFloorBenchmark() {
        assertEquals(0, run("--list", "floor"));
        String listing = out.toString(StandardCharsets.UTF_8);
        assertTrue(listing.startsWith("floor (FloorBenchmark)\n"), listing);
        assertTrue(listing.contains("acquireLoad"), listing);
        assertTrue(listing.contains("(@Scales)"), listing);
    }
}
