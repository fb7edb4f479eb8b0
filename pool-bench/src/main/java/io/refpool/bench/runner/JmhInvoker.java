package io.refpool.bench.runner;

import java.io.PrintStream;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs one {@link PlannedRun} through JMH's Java API: one fork, one parameter combination, one
 * implementation, one mode.
 *
 * <pre>{@code
 * RunResult result = new JmhInvoker(Profile.QUICK, jmhLog).run(plannedRun);
 * }</pre>
 *
 * <p>The profile sets warmup and measurement, overriding the class's {@code @Warmup} and {@code
 * @Measurement}; {@code @Fork(jvmArgs...)} and the rest of its annotations stay. Throughput is
 * reported in ops/s and every time mode in ns/op, whatever {@code @OutputTimeUnit} says, so the
 * tables of all suites share units. The GC profiler is always on, for bytes/op. JMH's own report
 * goes to the log stream (normally {@code jmh.log} in the result directory), not the console.
 */
final class JmhInvoker {
    private final Profile profile;
    private final PrintStream log;

    JmhInvoker(Profile profile, PrintStream log) {
        this.profile = profile;
        this.log = log;
    }

    RunResult run(PlannedRun run) throws RunnerException {
        log.println();
        log.println("# refpool bench: " + run.describe());
        Collection<RunResult> results =
                new Runner(options(run), OutputFormatFactory.createFormatInstance(log, VerboseMode.NORMAL)).run();
        log.flush();
        if (results.size() != 1) {
            throw new RunnerException("expected one result for " + run.describe() + ", JMH returned " + results.size());
        }
        return results.iterator().next();
    }

    Options options(PlannedRun run) {
        Row row = run.row();
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include("^" + Pattern.quote(row.jmhName()) + "$")
                // a method with several modes is listed once per mode; the mode picks this row's
                .mode(row.mode())
                .timeUnit(row.mode() == Mode.Throughput ? TimeUnit.SECONDS : TimeUnit.NANOSECONDS)
                .forks(1)
                .warmupForks(0)
                .warmupIterations(profile.warmupIterations())
                .measurementIterations(profile.measurementIterations())
                .measurementTime(
                        TimeValue.milliseconds(profile.measurementTime().toMillis()))
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true)
                .verbosity(VerboseMode.NORMAL);
        if (profile.warmupIterations() > 0) {
            options.warmupTime(TimeValue.milliseconds(profile.warmupTime().toMillis()));
        }
        row.params().forEach(options::param);
        run.impl().ifPresent(impl -> options.param(BenchmarkDescriptor.IMPL, impl));
        if (row.scales()) {
            options.threads(row.threads());
        }
        return options.build();
    }
}
