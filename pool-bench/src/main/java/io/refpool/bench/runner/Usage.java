package io.refpool.bench.runner;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The text of {@code --help}, also printed after a command-line error.
 *
 * <pre>{@code
 * System.out.print(Usage.text());
 * }</pre>
 *
 * <p>The suite and profile lines are generated from {@link Suite} and {@link Profile}, so the help
 * cannot drift from what the runner does.
 */
final class Usage {
    private Usage() {}

    static String text() {
        String suites = Suite.comparisons().stream()
                .map(s -> String.format("  %-10s %-22s %s%n", s.commandName(), s.simpleClassName(), s.description()))
                .collect(Collectors.joining());
        Suite floor = Suite.FLOOR;
        String floorLine = String.format(
                "  %-10s %-22s %s%n  %-10s %-22s %s%n",
                floor.commandName(),
                floor.simpleClassName(),
                floor.description(),
                "",
                "",
                "(runs once in every invocation; name it to run only the floor)");
        String profiles = Arrays.stream(Profile.values())
                .map(p -> String.format(
                        "  --%-8s %s%s; threads %s%n",
                        p.commandName(),
                        p == Profile.QUICK ? "(default) " : "",
                        p.summary(),
                        p.defaultThreads().stream().map(String::valueOf).collect(Collectors.joining(","))
                                + (p == Profile.SMOKE ? " unless --threads is given" : "")))
                .collect(Collectors.joining());
        return """
                Usage: java -jar pool-bench/target/pool-bench.jar [SUITE...] [--quick | --full | --smoke]
                           [--threads N,N,...] [--out DIR] [--list] [--help]

                Runs refpool's JMH benchmarks next to their peers and baselines in one run, interleaved
                fork by fork (fork 1 of every implementation, then fork 2, ...), and reports refpool's
                speedup over each peer as the median of the per-fork ratios with their range.

                Suites (default: attach; with --smoke: all):
                """ + suites + floorLine + """
                  all        every suite above except floor

                Profiles (each fork is one JVM; "x" = iterations x iteration time):
                """ + profiles + """

                Options:
                  --threads N,N,...  thread counts for @Scales benchmarks, positive, comma-separated
                  --out DIR          result directory, created if missing (default pool-bench/target/results)
                  --list             list the benchmarks of each suite and run nothing
                  --help, -h         print this help

                Files written to --out, per suite:
                  SUITE.json  JMH's raw results (JMH JSON format), one entry per fork and implementation
                  SUITE.csv   the table, one line per row and implementation: score, error, unit, p50, p99,
                              bytes_per_op, forks, bytes_per_op_by_fork, ratio_median, ratio_min, ratio_max,
                              creations_per_1k, cpu_ns_per_op (benchmarks that count them)
                  SUITE.svg   throughput against threads of the @Scales benchmarks, one panel per benchmark
                              and parameters, one line per implementation (only for suites that scale)
                  jmh.log     JMH's own report of every run, to diagnose a failed run

                Reading the table: score is JMH's mean over all forks (ops/s for Throughput, ns/op for time
                modes; p50/p99 for SampleTime), error the 99.9% confidence half-width, B/op the allocation
                per operation. "refpool speedup" is refpool/peer for ops/s and peer/refpool for ns/op, so
                above 1 always means refpool is faster. Threads marked * exceed the machine's cores.
                A @Group benchmark (readers and a writer, say) has a line for the whole group (all its
                threads' operations, all their samples) and below it a line for each of its methods.

                Benchmark conventions the runner relies on:
                  - one JMH class per subject in package io.refpool.bench, named <Subject>Benchmark
                  - @Param("impl") picks the implementation: "refpool" is refpool, every other value a
                    peer or baseline; a benchmark without it is a single-implementation row
                  - methods annotated @io.refpool.bench.Scales run once per --threads count; others keep
                    the threads of @Threads or @Group/@GroupThreads
                  - every other @Param (state, callbacks, ...) is part of the row
                  - modes come from @BenchmarkMode; the GC profiler is always on (bytes/op)

                Exit status: 0 done; 1 a run failed, or none of the suites asked for has benchmarks;
                2 bad command line.
                """;
    }
}
