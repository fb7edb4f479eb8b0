package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;

/**
 * A {@code @Group} benchmark, run through real JMH forks, is reported on a line for the group and
 * a line for each of its methods, read from the result JMH keeps for each method.
 */
class GroupRolesTest {
    private static final PrintStream DISCARD = new PrintStream(OutputStream.nullOutputStream());

    private static BenchmarkDescriptor mixed11(Mode mode) {
        return BenchmarkCatalog.fromClassPath().benchmarks(Suite.SHARED).stream()
                .filter(d -> d.method().equals("mixed11") && d.mode() == mode)
                .findFirst()
                .orElseThrow();
    }

    private static List<RowResult> run(Mode mode) {
        BenchmarkDescriptor descriptor = mixed11(mode);
        assertEquals(
                List.of("mixed11Reader", "mixed11Writer"),
                descriptor.roles().stream().sorted().toList());
        Row row = PlanBuilder.plan(Suite.SHARED, List.of(descriptor), 1, List.of(2))
                .rows()
                .get(0);
        Row refpoolOnly = new Row(
                row.suite(),
                row.benchmarkClass(),
                row.benchmark(),
                row.mode(),
                row.params(),
                row.threads(),
                row.scales(),
                List.of("refpool", "fair-rrwl"),
                row.roles());
        List<PlannedRun> runs = List.of(
                new PlannedRun(refpoolOnly, Optional.of("refpool"), 1, 1),
                new PlannedRun(refpoolOnly, Optional.of("fair-rrwl"), 1, 1));
        PlanExecutor executor = new PlanExecutor(
                new JmhInvoker(Profile.SMOKE, DISCARD),
                new Progress(runs.size(), Duration.ofMillis(100), System::nanoTime, DISCARD),
                DISCARD);
        SuiteOutcome outcome = executor.execute(new SuitePlan(Suite.SHARED, List.of(refpoolOnly), runs));
        assertEquals(0, outcome.failedRuns());
        return outcome.result().rows();
    }

    @Test
    void sampledGroupHasPercentilesForEachMethod() {
        List<RowResult> rows = run(Mode.SampleTime);
        assertEquals(
                List.of("mixed11", "mixed11Reader", "mixed11Writer"),
                rows.stream().map(r -> r.row().benchmark()).toList());
        for (RowResult row : rows) {
            assertEquals(
                    List.of("refpool", "fair-rrwl"),
                    row.results().stream().map(ImplResult::impl).toList());
            for (ImplResult impl : row.results()) {
                assertTrue(impl.p50() > 0 && impl.p99() >= impl.p50(), row.row().benchmark() + " " + impl);
            }
            assertTrue(row.ratio(row.results().get(1)).isPresent(), row.row().benchmark());
        }
    }

    @Test
    void groupThroughputIsTheSumOfItsMethods() {
        List<RowResult> rows = run(Mode.Throughput);
        for (int i = 0; i < 2; i++) {
            double group = rows.get(0).results().get(i).score();
            double reader = rows.get(1).results().get(i).score();
            double writer = rows.get(2).results().get(i).score();
            assertTrue(reader > 0 && writer > 0, rows.toString());
            assertEquals(group, reader + writer, group * 1e-6, rows.toString());
        }
    }
}
