package io.refpool.bench;

import io.refpool.bench.runner.BenchRunner;

/**
 * The benchmark runner: refpool measured side by side with its peers, as ratios.
 *
 * <pre>
 * java -jar pool-bench/target/pool-bench.jar                 # attach suite, quick profile (109 runs, ~8 min)
 * java -jar pool-bench/target/pool-bench.jar mutex shared --threads 1,2,4,8
 * java -jar pool-bench/target/pool-bench.jar all --full --out results
 * java -jar pool-bench/target/pool-bench.jar --smoke         # every benchmark once, briefly
 * java -jar pool-bench/target/pool-bench.jar --list | --help
 * </pre>
 *
 * <p>Suites: {@code attach} (default), {@code mutex}, {@code shared}, {@code semaphore}, {@code
 * cancel}, {@code pool}, {@code all}; {@code floor} runs once in every invocation. Profiles: {@code
 * --quick} (default), {@code --full}, {@code --smoke}; the numbers and their reasons are in the
 * runner's {@code Profile}. Per suite the runner prints a table and writes {@code <suite>.json}
 * (JMH's raw results), {@code <suite>.csv} and {@code <suite>.svg} (throughput against threads) to
 * {@code --out} (default {@code pool-bench/target/results}), plus JMH's own report in {@code
 * jmh.log}. Exit status: 0 done, 1 a run failed or nothing asked for exists, 2 bad command line.
 *
 * <h2>Conventions every benchmark class follows</h2>
 *
 * <p>The runner discovers benchmarks from JMH's generated list and relies on these:
 *
 * <ul>
 *   <li>One JMH class per subject in package {@code io.refpool.bench}, named {@code
 *       <Subject>Benchmark}; each suite runs one class (e.g. {@code mutex} runs {@code
 *       MutexBenchmark}). A suite whose class does not exist yet is skipped with a line saying so.
 *   <li>The implementation under test is the JMH {@code @Param} named {@code impl}: the value
 *       {@code refpool} is refpool, every other value (e.g. {@code reentrant-lock}, {@code
 *       asyncutil}, {@code swap-flag}, {@code naive}) a peer or baseline. A benchmark without
 *       {@code impl} is a single-implementation row, like the floor.
 *   <li>Methods annotated {@link Scales} run once per thread count of {@code --threads} (default
 *       1,2,4) and are charted; other methods keep the threads their JMH annotations give them
 *       ({@code @Threads}, {@code @Group}/{@code @GroupThreads}).
 *   <li>Every other {@code @Param} ({@code state}, {@code callbacks}, ...) becomes part of the row:
 *       a row is benchmark × one value of each such parameter × one thread count.
 *   <li>Modes come from {@code @BenchmarkMode}: Throughput is reported in ops/s, AverageTime in
 *       ns/op, SampleTime in ns/op with p50 and p99. The runner always adds JMH's GC profiler and
 *       reports {@code gc.alloc.rate.norm} as bytes/op. Forks, warmup and measurement come from the
 *       profile, not from the class's annotations.
 * </ul>
 *
 * <h2>How a comparison is measured</h2>
 *
 * <p>All implementations of a row are measured in the same invocation, interleaved: fork 1 of
 * every implementation, then fork 2 of every implementation (A B A B), each fork its own JMH run
 * with {@code forks(1)} and {@code param("impl", x)}. Each fork of refpool is divided by the fork of
 * the peer that ran next to it, so a drift of the machine's speed cancels out; the table shows the
 * median of these per-fork ratios with their range, as refpool's speedup (refpool ÷ peer for
 * throughput, peer ÷ refpool for times: above 1 means refpool is faster in every mode).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.exit(BenchRunner.run(args, System.out, System.err));
    }
}
