package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;

class SuiteSelectionTest {
    private static BenchmarkDescriptor benchmark(Suite suite) {
        return new BenchmarkDescriptor(
                suite.benchmarkClass(), "run", Mode.Throughput, new TreeMap<>(), 1, false, List.of());
    }

    private static SuiteSelection select(BenchmarkCatalog catalog, String... args) throws UsageException {
        return SuiteSelection.of(OptionsParser.parse(List.of(args)), catalog);
    }

    private final BenchmarkCatalog floorOnly = new BenchmarkCatalog(List.of(benchmark(Suite.FLOOR)));

    @Test
    void theDefaultSuiteMissingStillRunsTheFloor() throws UsageException {
        SuiteSelection selection = select(floorOnly);
        assertEquals(List.of(Suite.FLOOR), selection.suites());
        assertEquals(List.of("suite 'attach': no benchmarks in this build"), selection.notBuilt());
        assertFalse(selection.nothingToRun());
    }

    @Test
    void smokeOverNothingBuiltStillRunsTheFloor() throws UsageException {
        SuiteSelection selection = select(floorOnly, "--smoke");
        assertEquals(List.of(Suite.FLOOR), selection.suites());
        assertEquals(Suite.comparisons().size(), selection.notBuilt().size());
        assertFalse(selection.nothingToRun());
    }

    @Test
    void namedSuitesThatAllLackBenchmarksAreAnError() throws UsageException {
        SuiteSelection selection = select(floorOnly, "shared");
        assertTrue(selection.nothingToRun());
        assertEquals(List.of("suite 'shared': no benchmarks in this build"), selection.notBuilt());
        assertTrue(select(floorOnly, "all").nothingToRun());
    }

    @Test
    void namingTheFloorRunsJustTheFloor() throws UsageException {
        SuiteSelection selection = select(floorOnly, "floor");
        assertEquals(List.of(Suite.FLOOR), selection.suites());
        assertFalse(selection.nothingToRun());
        assertFalse(select(floorOnly, "shared", "floor").nothingToRun());
    }

    @Test
    void builtSuitesRunAfterTheFloorAndMissingOnesAreSkipped() throws UsageException {
        BenchmarkCatalog catalog = new BenchmarkCatalog(List.of(benchmark(Suite.FLOOR), benchmark(Suite.MUTEX)));
        SuiteSelection selection = select(catalog, "shared", "mutex");
        assertEquals(List.of(Suite.FLOOR, Suite.MUTEX), selection.suites());
        assertEquals(List.of("suite 'shared': no benchmarks in this build"), selection.notBuilt());
        assertFalse(selection.nothingToRun());
    }
}
