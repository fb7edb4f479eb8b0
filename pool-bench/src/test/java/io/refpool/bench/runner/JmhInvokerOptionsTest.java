package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.runner.options.Options;

class JmhInvokerOptionsTest {
    private final JmhInvoker invoker = new JmhInvoker(Profile.QUICK, new PrintStream(OutputStream.nullOutputStream()));

    @Test
    void aScalingRunPinsOneForkOneImplementationItsParametersAndItsThreads() {
        Row row = CannedResults.row("nested", Mode.Throughput, Map.of("state", "sparse"), 4, true);
        Options options = invoker.options(new PlannedRun(row, Optional.of("swap-flag"), 2, 2));

        assertEquals(List.of("^\\Qio.refpool.bench.AttachBenchmark.nested\\E$"), options.getIncludes());
        assertEquals(
                List.of("swap-flag"), List.copyOf(options.getParameter("impl").get()));
        assertEquals(
                List.of("sparse"), List.copyOf(options.getParameter("state").get()));
        assertEquals(4, options.getThreads().get());
        assertEquals(1, options.getForkCount().get());
        assertEquals(0, options.getWarmupForkCount().get());
        assertEquals(List.of(Mode.Throughput), List.copyOf(options.getBenchModes()));
        assertEquals(TimeUnit.SECONDS, options.getTimeUnit().get());
        assertEquals(2, options.getWarmupIterations().get());
        assertEquals(3, options.getMeasurementIterations().get());
        assertTrue(options.getProfilers().stream().anyMatch(p -> p.getKlass().equals(GCProfiler.class.getName())));
    }

    @Test
    void otherRunsKeepTheirAnnotatedThreadsAndReportTimesInNanoseconds() {
        Row row = CannedResults.row("acquireRelease", Mode.SampleTime, Map.of(), 2, false);
        Options options = invoker.options(new PlannedRun(row, Optional.of("refpool"), 1, 2));
        assertFalse(options.getThreads().hasValue());
        assertEquals(TimeUnit.NANOSECONDS, options.getTimeUnit().get());
        assertEquals(List.of(Mode.SampleTime), List.copyOf(options.getBenchModes()));
    }

    @Test
    void singleImplementationRunsSetNoImpl() {
        Row row = new Row(
                "floor",
                "io.refpool.bench.FloorBenchmark",
                "casUncontended",
                Mode.AverageTime,
                new java.util.TreeMap<>(),
                1,
                false,
                List.of(),
                List.of());
        Options options = invoker.options(new PlannedRun(row, Optional.empty(), 1, 1));
        assertFalse(options.getParameter("impl").hasValue());
    }
}
