package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;

class TableFormatterTest {
    private final String table = new TableFormatter(2).format(CannedResults.attachSuite());

    private List<String> lines() {
        return table.lines().toList();
    }

    private String lineWith(String... words) {
        return lines().stream()
                .filter(line -> List.of(words).stream().allMatch(line::contains))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no line with " + List.of(words) + " in\n" + table));
    }

    @Test
    void namesTheSuiteAndExplainsTheSpeedup() {
        assertTrue(lines().get(0).startsWith("attach (AttachBenchmark): 4 rows"), table);
        assertTrue(table.contains("refpool/peer for ops/s"), table);
        assertTrue(table.contains("peer/refpool for ns/op"), table);
    }

    @Test
    void aRowShowsEachImplementationsScoreErrorAndUnit() {
        String refpool = lineWith("nested", "thrpt", "state=sparse", "refpool");
        assertTrue(refpool.matches(".*\\b1\\s+refpool\\s+105\\.0M\\s+1\\.050M\\s+ops/s\\s+0\\.0\\s*$"), refpool);
        String alwaysLock = lineWith("always-lock", "35.00M");
        assertTrue(alwaysLock.contains("ops/s"), alwaysLock);
    }

    @Test
    void peersCarryRefpoolsSpeedupAsMedianAndRange() {
        assertTrue(lineWith("swap-flag", "50.00M").endsWith("2.10x [2.00-2.20]"), table);
        assertTrue(lineWith("swap-flag", "12.50M").endsWith("33.60x [32.00-35.20]"), table);
        assertTrue(lineWith("always-lock", "35.00M").endsWith("3.04x [2.75-3.33]"), table);
    }

    @Test
    void timeModesInvertTheRatioAndShowPercentiles() {
        String swapFlag = lineWith("swap-flag", "60.00");
        assertTrue(
                swapFlag.matches(
                        ".*60\\.00\\s+2\\.500\\s+ns/op\\s+55\\.00\\s+120\\.0\\s+24\\.0\\s+0/48\\s+3\\.00x \\[2\\.50-3\\.50]$"),
                swapFlag);
        String header = lineWith("benchmark", "score");
        assertTrue(
                header.matches(".*score\\s+error\\s+unit\\s+p50\\s+p99\\s+B/op\\s+B/op by fork\\s+refpool speedup$"),
                header);
    }

    @Test
    void failedImplementationsAreListed() {
        assertTrue(lineWith("always-lock", "failed").length() > 0);
    }

    @Test
    void threadsAboveTheCoresAreMarkedOversubscribed() {
        assertTrue(lineWith("4*", "refpool").contains("420.0M"), table);
        assertTrue(lines().stream().noneMatch(line -> line.contains("2*")), table);
        assertTrue(table.contains("* oversubscribed: more threads than the 2 cores"), table);
        String roomy = new TableFormatter(8).format(CannedResults.attachSuite());
        assertTrue(!roomy.contains("*"), roomy);
    }

    @Test
    void fitsA140ColumnTerminalInAscii() {
        for (String line : lines()) {
            assertTrue(line.length() <= 140, line);
            assertTrue(line.chars().allMatch(c -> c < 128), line);
        }
    }

    @Test
    void singleImplementationSuitesDropTheImplAndParamsColumns() {
        Row row = new Row(
                "floor",
                "io.refpool.bench.FloorBenchmark",
                "casUncontended",
                Mode.AverageTime,
                new java.util.TreeMap<>(Map.of()),
                1,
                false,
                List.of(),
                List.of());
        SuiteResult floor = new SuiteResult(
                "floor",
                "FloorBenchmark",
                List.of(new RowResult(
                        row,
                        List.of(new ImplResult(
                                ImplResult.NO_IMPL,
                                5.25,
                                0.5,
                                "ns/op",
                                Double.NaN,
                                Double.NaN,
                                0.0,
                                List.of(5.25),
                                List.of(0.0),
                                Double.NaN,
                                Double.NaN)),
                        List.of())));
        List<String> floorLines = new TableFormatter(2).format(floor).lines().toList();
        assertEquals("benchmark       mode  threads  score   error  unit   B/op", floorLines.get(1));
        assertEquals("casUncontended  avgt        1  5.250  0.5000  ns/op   0.0", floorLines.get(2));
    }

    @Test
    void countedCreationsAndCpuTimeGetTheirOwnColumns() {
        Row row = new Row(
                "pool",
                "io.refpool.bench.PoolBenchmark",
                "churnRequest",
                Mode.Throughput,
                new java.util.TreeMap<>(Map.of()),
                1,
                false,
                List.of(),
                List.of());
        SuiteResult pool = new SuiteResult(
                "pool",
                "PoolBenchmark",
                List.of(new RowResult(
                        row,
                        List.of(new ImplResult(
                                ImplResult.NO_IMPL,
                                1000.0,
                                10.0,
                                "ops/s",
                                Double.NaN,
                                Double.NaN,
                                Double.NaN,
                                List.of(1000.0),
                                List.of(),
                                802.25,
                                1234.5)),
                        List.of())));
        List<String> lines = new TableFormatter(2).format(pool).lines().toList();
        assertTrue(lines.get(1).endsWith("creations/1k  cpu ns/op"), lines.get(1));
        assertTrue(lines.get(2).matches(".*802\\.3 +1235$"), lines.get(2));
    }
}
