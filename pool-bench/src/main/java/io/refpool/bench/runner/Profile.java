package io.refpool.bench.runner;

import java.time.Duration;
import java.util.List;

/**
 * How long and how often each benchmark is measured: {@code --quick}, {@code --full} or {@code
 * --smoke}.
 *
 * <pre>{@code
 * Profile.QUICK.nominalRunTime();   // warmup + measurement of one JMH run, without the JVM start
 * }</pre>
 *
 * <p>Every run is one forked JVM ({@code forks(1)}); {@link #forks()} is how many such runs each
 * implementation of a row gets, interleaved with the other implementations. The numbers:
 *
 * <ul>
 *   <li><b>quick</b> (default): 2 forks, warmup 2 × 500 ms, measurement 3 × 800 ms. The benchmarked
 *       methods are a few dozen bytecodes; C2 compiles them within the first tens of milliseconds,
 *       so one second of warmup leaves lock inflation and the GC settled, not the JIT. Three
 *       measured iterations per fork give JMH an error bar, and two forks give a median and a
 *       spread for every ratio. A run costs about 3.4 s plus the JVM start and JMH's setup (about
 *       0.8 s on two cores), so the default invocation (floor and attach, 109 runs at threads 1,2,4)
 *       takes about 8 minutes; the runner prints its estimate before the first run.
 *   <li><b>full</b>: 4 forks, warmup 5 × 1 s, measurement 5 × 2 s. Fork-to-fork variance (JIT
 *       decisions, code and heap layout) dominates for lock benchmarks, so the extra budget goes
 *       to forks first; longer iterations smooth out scheduler noise at oversubscribed thread
 *       counts. About 16 s per run.
 *   <li><b>smoke</b>: 1 fork, no warmup, 1 × 100 ms, and one thread count (2) unless {@code
 *       --threads} is given: it proves every benchmark runs, and measures nothing worth reading.
 * </ul>
 *
 * <p>The floor gets {@link #floorForks()}: it has a single implementation, so there is no ratio
 * whose spread needs forks, and in the quick profile one fork saves half a minute.
 */
enum Profile {
    QUICK("quick", 2, 1, 2, Duration.ofMillis(500), 3, Duration.ofMillis(800), List.of(1, 2, 4)),
    FULL("full", 4, 2, 5, Duration.ofSeconds(1), 5, Duration.ofSeconds(2), List.of(1, 2, 4)),
    SMOKE("smoke", 1, 1, 0, Duration.ZERO, 1, Duration.ofMillis(100), List.of(2));

    private final String commandName;
    private final int forks;
    private final int floorForks;
    private final int warmupIterations;
    private final Duration warmupTime;
    private final int measurementIterations;
    private final Duration measurementTime;
    private final List<Integer> defaultThreads;

    Profile(
            String commandName,
            int forks,
            int floorForks,
            int warmupIterations,
            Duration warmupTime,
            int measurementIterations,
            Duration measurementTime,
            List<Integer> defaultThreads) {
        this.commandName = commandName;
        this.forks = forks;
        this.floorForks = floorForks;
        this.warmupIterations = warmupIterations;
        this.warmupTime = warmupTime;
        this.measurementIterations = measurementIterations;
        this.measurementTime = measurementTime;
        this.defaultThreads = defaultThreads;
    }

    String commandName() {
        return commandName;
    }

    int forks() {
        return forks;
    }

    int floorForks() {
        return floorForks;
    }

    int warmupIterations() {
        return warmupIterations;
    }

    Duration warmupTime() {
        return warmupTime;
    }

    int measurementIterations() {
        return measurementIterations;
    }

    Duration measurementTime() {
        return measurementTime;
    }

    /** The thread counts of {@code @Scales} benchmarks when {@code --threads} is not given. */
    List<Integer> defaultThreads() {
        return defaultThreads;
    }

    /** Warmup plus measurement time of one JMH run, the JVM start not included. */
    Duration nominalRunTime() {
        return warmupTime.multipliedBy(warmupIterations).plus(measurementTime.multipliedBy(measurementIterations));
    }

    /** One line for the help and the run header, e.g. "2 forks, warmup 2 × 500 ms, ...". */
    String summary() {
        String warmup = warmupIterations == 0
                ? "no warmup"
                : "warmup " + warmupIterations + " x " + Durations.format(warmupTime);
        return forks + (forks == 1 ? " fork" : " forks") + ", " + warmup + ", measurement " + measurementIterations
                + " x " + Durations.format(measurementTime);
    }
}
