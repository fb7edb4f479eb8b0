package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;

class PlanBuilderInterleavingTest {
    private static final String CLASS = "io.refpool.bench.AttachBenchmark";

    private static BenchmarkDescriptor nested() {
        return new BenchmarkDescriptor(
                CLASS,
                "nested",
                Mode.Throughput,
                new TreeMap<>(Map.of(
                        "impl", List.of("swap-flag", "refpool", "always-lock"),
                        "state", List.of("empty", "sparse"))),
                1,
                true,
                List.of());
    }

    @Test
    void forksAlternateBetweenImplementationsWithinARow() {
        SuitePlan plan = PlanBuilder.plan(Suite.ATTACH, List.of(nested()), 2, List.of(1));
        List<String> firstRow = plan.runs().stream()
                .filter(run -> run.row().equals(plan.rows().get(0)))
                .map(run -> run.impl().orElseThrow() + "#" + run.fork())
                .toList();
        assertEquals(
                List.of("refpool#1", "swap-flag#1", "always-lock#1", "refpool#2", "swap-flag#2", "always-lock#2"),
                firstRow);
    }

    @Test
    void aRowsRunsAllFinishBeforeTheNextRowStarts() {
        SuitePlan plan = PlanBuilder.plan(Suite.ATTACH, List.of(nested()), 2, List.of(1, 2));
        int perRow = 2 * 3;
        for (int i = 0; i < plan.runs().size(); i++) {
            assertEquals(plan.rows().get(i / perRow), plan.runs().get(i).row(), "run " + i);
        }
    }

    @Test
    void scalingBenchmarksGetOneRowPerThreadCountAndParameterValue() {
        SuitePlan plan = PlanBuilder.plan(Suite.ATTACH, List.of(nested()), 3, List.of(1, 2, 4));
        assertEquals(2 * 3, plan.rows().size());
        assertEquals(2 * 3 * 3 * 3, plan.runs().size());
        assertEquals(
                List.of("empty/1", "empty/2", "empty/4", "sparse/1", "sparse/2", "sparse/4"),
                plan.rows().stream()
                        .map(row -> row.params().get("state") + "/" + row.threads())
                        .toList());
        assertTrue(plan.rows().stream().allMatch(row -> !row.params().containsKey("impl")));
        assertEquals(
                List.of("refpool", "swap-flag", "always-lock"),
                plan.rows().get(0).impls());
    }

    @Test
    void otherBenchmarksKeepTheirAnnotatedThreads() {
        var grouped = new BenchmarkDescriptor(
                CLASS,
                "readWrite",
                Mode.AverageTime,
                new TreeMap<>(Map.of("impl", List.of("refpool"))),
                3,
                false,
                List.of());
        SuitePlan plan = PlanBuilder.plan(Suite.ATTACH, List.of(grouped), 1, List.of(1, 2, 4, 8));
        assertEquals(1, plan.rows().size());
        assertEquals(3, plan.rows().get(0).threads());
        assertFalse(plan.rows().get(0).scales());
    }

    @Test
    void benchmarksWithoutImplRunOncePerFork() {
        var floor = new BenchmarkDescriptor(
                "io.refpool.bench.FloorBenchmark",
                "casUncontended",
                Mode.AverageTime,
                new TreeMap<>(),
                1,
                false,
                List.of());
        SuitePlan plan = PlanBuilder.plan(Suite.FLOOR, List.of(floor), 2, List.of(1, 2));
        assertEquals(2, plan.runs().size());
        assertTrue(plan.runs().stream().allMatch(run -> run.impl().equals(Optional.empty())));
        assertEquals(List.of(1, 2), plan.runs().stream().map(PlannedRun::fork).toList());
    }

    @Test
    void combinationsVaryTheFirstParameterSlowest() {
        var params = new TreeMap<String, List<String>>(Map.of(
                "callbacks", List.of("1", "8"),
                "state", List.of("empty", "sparse")));
        assertEquals(
                List.of(
                        Map.of("callbacks", "1", "state", "empty"),
                        Map.of("callbacks", "1", "state", "sparse"),
                        Map.of("callbacks", "8", "state", "empty"),
                        Map.of("callbacks", "8", "state", "sparse")),
                PlanBuilder.combinations(params));
    }

    @Test
    void progressDescribesARunWithItsKey() {
        SuitePlan plan = PlanBuilder.plan(Suite.ATTACH, List.of(nested()), 2, List.of(2));
        PlannedRun run = plan.runs().get(1);
        assertEquals("attach nested state=empty threads=2 impl=swap-flag fork 1/2", run.describe());
    }
}
