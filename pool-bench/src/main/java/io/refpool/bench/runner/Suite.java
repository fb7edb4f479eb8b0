package io.refpool.bench.runner;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The suites the runner knows: the name given on the command line, the JMH class it runs, and what
 * it measures.
 *
 * <pre>{@code
 * Suite.byName("mutex").orElseThrow().benchmarkClass();   // "io.refpool.bench.MutexBenchmark"
 * }</pre>
 *
 * <p>{@link #FLOOR} is special: the runner runs it once in every invocation, whatever suites were
 * asked for, so each report can be read against the physical floor. Naming it runs only the floor.
 */
enum Suite {
    ATTACH("attach", "AttachBenchmark", "attach and detach: the dirty-flag fast path"),
    MUTEX("mutex", "MutexBenchmark", "AsyncMutex acquire and release"),
    SHARED("shared", "SharedMutexBenchmark", "AsyncSharedMutex, readers and writers"),
    SEMAPHORE("semaphore", "SemaphoreBenchmark", "AsyncSemaphore acquire and release"),
    CANCEL("cancel", "CancellationBenchmark", "cancellation: register, unregister, cancel"),
    POOL("pool", "PoolBenchmark", "RefPool acquire, share and close of handles"),
    REQUEST("request", "RequestBenchmark", "a host's request: Zipf tenants, revive, random live key, vs peers"),
    TENANTS("tenants", "TenantBenchmark", "per-tenant engines: PER_OBJECT against GLOBAL and lock tables"),
    STOP("stop", "StopTheWorldBenchmark", "stopTheWorld: latency with readers active, one per 100 requests"),
    FLOOR("floor", "FloorBenchmark", "the physical floor: acquire load, uncontended CAS, lock+unlock");

    private static final String PACKAGE = "io.refpool.bench";

    private final String commandName;
    private final String className;
    private final String description;

    Suite(String commandName, String className, String description) {
        this.commandName = commandName;
        this.className = className;
        this.description = description;
    }

    /** The name used on the command line and for the result files. */
    String commandName() {
        return commandName;
    }

    String simpleClassName() {
        return className;
    }

    String benchmarkClass() {
        return PACKAGE + "." + className;
    }

    String description() {
        return description;
    }

    /** Every suite that compares implementations, in the order {@code all} runs them. */
    static List<Suite> comparisons() {
        return Arrays.stream(values()).filter(s -> s != FLOOR).toList();
    }

    static Optional<Suite> byName(String name) {
        return Arrays.stream(values()).filter(s -> s.commandName.equals(name)).findFirst();
    }

    static String names() {
        return Arrays.stream(values()).map(Suite::commandName).collect(Collectors.joining(", "));
    }
}
