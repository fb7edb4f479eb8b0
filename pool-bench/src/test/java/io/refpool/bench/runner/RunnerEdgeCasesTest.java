package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;

/** Edge cases of the runner's report classes and options. */
class RunnerEdgeCasesTest {

    /** AttachBenchmark.nested: impl=refpool,always-lock,swap-flag; "refpool" is drawn as "refpool queue check". */
    @Test
    void everySeriesOfAPanelHasItsOwnColour() {
        List<String> impls = List.of("refpool", "always-lock", "swap-flag");
        List<RowResult> rows = new ArrayList<>();
        for (int threads : List.of(1, 2)) {
            Row row = new Row(
                    "attach",
                    "io.refpool.bench.AttachBenchmark",
                    "nested",
                    Mode.Throughput,
                    new java.util.TreeMap<>(Map.of("state", "sparse")),
                    threads,
                    true,
                    impls,
                    List.of());
            rows.add(new RowResult(
                    row,
                    List.of(
                            CannedResults.thrpt("refpool", 100e6),
                            CannedResults.thrpt("always-lock", 30e6),
                            CannedResults.thrpt("swap-flag", 50e6)),
                    List.of()));
        }
        ScalingChart chart = ScalingCharts.build(new SuiteResult("attach", "AttachBenchmark", rows))
                .get(0);
        Set<String> colours = new HashSet<>();
        StringBuilder seen = new StringBuilder();
        for (ScalingChart.Series series : chart.series()) {
            colours.add(series.color());
            seen.append(series.name()).append('=').append(series.color()).append(' ');
        }
        assertEquals(chart.series().size(), colours.size(), "two series share a colour: " + seen);
    }

    @Test
    void compactRollsOverToTheNextSuffix() {
        assertEquals("1.000M", Numbers.compact(999_999));
        assertEquals("1.000G", Numbers.compact(999_999_999));
    }

    @Test
    void aThreadCountTooLargeForAnIntIsOutOfRangeNotNotANumber() {
        UsageException e = org.junit.jupiter.api.Assertions.assertThrows(
                UsageException.class, () -> OptionsParser.parseThreads("99999999999"));
        assertEquals("--threads: 99999999999 is outside 1..1024", e.getMessage());
    }
}
