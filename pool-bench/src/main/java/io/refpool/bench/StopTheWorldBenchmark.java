package io.refpool.bench;

import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.RefPool;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code pool.stopTheWorld()} next to the requests it stops: how long it waits with readers active,
 * and what a workload that stops the world now and then costs the requests.
 *
 * <pre>
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main StopTheWorldBenchmark -prof gc
 * </pre>
 *
 * <ul>
 *   <li>{@code withReaders}: one thread runs requests ({@code pool.call} on one of four tenants of a
 *       {@code SHARED} pool) without pause while another stops the world and lets it go again; the
 *       sample-time mode reports the distribution (p50, p99) of each, the stop's being the time from
 *       asking until every reader has left.
 *   <li>{@link #exclusiveHeavy}: each operation is 100 requests then one stop of the world, on
 *       every thread, the workload of a host that reconfigures often.
 * </ul>
 */
@State(Scope.Benchmark)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StopTheWorldBenchmark {
    static final String[] TENANTS = {"tenant-0", "tenant-1", "tenant-2", "tenant-3"};
    static final int REQUESTS_PER_STOP = 100;

    RefPool<String, RequestBenchmark.Engine> pool;

    @Setup(Level.Trial)
    public void open() {
        pool = RefPool.builder(RequestBenchmark.Engine::new)
                .attachMode(AttachMode.SHARED)
                .idle(cache -> cache.maximumSize(TENANTS.length))
                .build();
    }

    @TearDown(Level.Trial)
    public void close() {
        pool.close();
    }

    /** A thread's tenant draws. */
    @State(Scope.Thread)
    public static class Picker {
        private final SplittableRandom random = new SplittableRandom();

        String next() {
            return TENANTS[random.nextInt(TENANTS.length)];
        }
    }

    private Object request(Picker picker) {
        return pool.call(picker.next(), RequestBenchmark.Engine::use);
    }

    @Benchmark
    @Group("withReaders")
    @GroupThreads(1)
    @BenchmarkMode(Mode.SampleTime)
    public Object reader(Picker picker) {
        return request(picker);
    }

    @Benchmark
    @Group("withReaders")
    @GroupThreads(1)
    @BenchmarkMode(Mode.SampleTime)
    public void stopTheWorld() {
        pool.stopTheWorld().close();
    }

    @Benchmark
    @Scales
    @BenchmarkMode(Mode.AverageTime)
    @SuppressWarnings("try") // the stop is held, not referenced
    public Object exclusiveHeavy(Picker picker) {
        Object last = null;
        for (int i = 0; i < REQUESTS_PER_STOP; i++) {
            last = request(picker);
        }
        try (Attachment world = pool.stopTheWorld()) {
            return last;
        }
    }
}
