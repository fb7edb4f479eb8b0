package io.refpool.bench;

import io.refpool.sync.AsyncSharedMutex;
import io.refpool.sync.Guard;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Splits the writer's cycle of {@link SharedMutexBenchmark}'s {@code mixed90} (nine readers and one
 * writer, each working a little inside and outside the lock) into its wait, its release and the
 * whole cycle, and samples the writer's stack whenever a release has run longer than 500 µs. JMH
 * reports one latency per cycle; this says which part of it the tail is in.
 *
 * <pre>{@code
 * java -cp pool-bench/target/pool-bench.jar io.refpool.bench.WriterReleaseProbe refpool 8
 * java -cp pool-bench/target/pool-bench.jar io.refpool.bench.WriterReleaseProbe fair-rrwl 8
 * }</pre>
 *
 * <p>Not a benchmark: the timestamps around each step cost the writer a few tens of nanoseconds,
 * the same for both locks, and the output is percentiles of one run, to be read side by side.
 */
public final class WriterReleaseProbe {
    private static final int READERS = 9;
    private static final long WORK = 20; // SharedMutexBenchmark's WORK tokens
    private static final long SLOW_RELEASE_NANOS = TimeUnit.MICROSECONDS.toNanos(500);
    private static final int MAX_SAMPLES = 1 << 22;

    /** One lock under test: the writer's acquire and release, the readers' whole critical section. */
    private interface Subject {
        void writeLock() throws InterruptedException;

        void writeUnlock();

        void readLocked() throws InterruptedException;
    }

    private final Subject subject;
    private final long[] waits = new long[MAX_SAMPLES];
    private final long[] releases = new long[MAX_SAMPLES];
    private final long[] cycles = new long[MAX_SAMPLES];
    private final Map<String, Integer> slowReleaseStacks = new ConcurrentHashMap<>();
    private volatile boolean stop;
    private volatile long releaseStartedAt;
    private int samples;

    private WriterReleaseProbe(Subject subject) {
        this.subject = subject;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: WriterReleaseProbe refpool|fair-rrwl SECONDS");
            System.exit(2);
        }
        WriterReleaseProbe probe = new WriterReleaseProbe(subject(args[0]));
        probe.run(Integer.parseInt(args[1]));
        probe.report(args[0]);
    }

    private static Subject subject(String impl) {
        switch (impl) {
            case "refpool":
                AsyncSharedMutex mutex = new AsyncSharedMutex();
                Guard[] writer = new Guard[1]; // only the writer thread touches it
                return new Subject() {
                    @Override
                    public void writeLock() throws InterruptedException {
                        writer[0] = mutex.acquireBlocking();
                    }

                    @Override
                    public void writeUnlock() {
                        writer[0].close();
                    }

                    @Override
                    public void readLocked() throws InterruptedException {
                        Guard shared = mutex.acquireSharedBlocking();
                        try {
                            Blackhole.consumeCPU(WORK);
                        } finally {
                            shared.close();
                        }
                    }
                };
            case "fair-rrwl":
                ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);
                return new Subject() {
                    @Override
                    public void writeLock() throws InterruptedException {
                        lock.writeLock().lockInterruptibly();
                    }

                    @Override
                    public void writeUnlock() {
                        lock.writeLock().unlock();
                    }

                    @Override
                    public void readLocked() throws InterruptedException {
                        lock.readLock().lockInterruptibly();
                        try {
                            Blackhole.consumeCPU(WORK);
                        } finally {
                            lock.readLock().unlock();
                        }
                    }
                };
            default:
                throw new IllegalArgumentException("impl must be refpool or fair-rrwl, was '" + impl + "'");
        }
    }

    private void run(int seconds) throws InterruptedException {
        Thread[] readers = new Thread[READERS];
        for (int i = 0; i < READERS; i++) {
            readers[i] = new Thread(this::read, "reader-" + i);
            readers[i].start();
        }
        Thread writer = new Thread(this::write, "writer");
        writer.start();
        Thread sampler = new Thread(() -> sampleSlowReleases(writer), "sampler");
        sampler.setDaemon(true);
        sampler.start();
        TimeUnit.SECONDS.sleep(seconds);
        stop = true;
        writer.join();
        for (Thread reader : readers) {
            reader.join();
        }
    }

    private void read() {
        try {
            while (!stop) {
                subject.readLocked();
                Blackhole.consumeCPU(WORK);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void write() {
        try {
            while (!stop && samples < MAX_SAMPLES) {
                long start = System.nanoTime();
                subject.writeLock();
                long acquired = System.nanoTime();
                Blackhole.consumeCPU(WORK);
                long releasing = System.nanoTime();
                releaseStartedAt = releasing;
                subject.writeUnlock();
                releaseStartedAt = 0L;
                long released = System.nanoTime();
                Blackhole.consumeCPU(WORK);
                long end = System.nanoTime();
                waits[samples] = acquired - start;
                releases[samples] = released - releasing;
                cycles[samples] = end - start;
                samples++;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Every 200 µs: if the writer's current release has run past 500 µs, counts its top frames. */
    private void sampleSlowReleases(Thread writer) {
        while (!stop) {
            long startedAt = releaseStartedAt;
            if (startedAt != 0L && System.nanoTime() - startedAt > SLOW_RELEASE_NANOS) {
                StackTraceElement[] stack = writer.getStackTrace();
                if (releaseStartedAt == startedAt) { // still the same release: the stack is inside it
                    slowReleaseStacks.merge(describe(writer.getState(), stack), 1, Integer::sum);
                }
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
    }

    private static String describe(Thread.State state, StackTraceElement[] stack) {
        StringBuilder sb = new StringBuilder(state.toString());
        for (int i = 0; i < Math.min(4, stack.length); i++) {
            String type = stack[i].getClassName();
            sb.append(" < ")
                    .append(type.substring(type.lastIndexOf('.') + 1))
                    .append('.')
                    .append(stack[i].getMethodName());
        }
        return sb.toString();
    }

    private void report(String impl) {
        System.out.printf("%s, %d writer cycles, µs:%n", impl, samples);
        System.out.println("  wait     " + percentiles(waits));
        System.out.println("  release  " + percentiles(releases));
        System.out.println("  cycle    " + percentiles(cycles));
        System.out.println("  the writer's stack in releases past 500 µs (samples, state < top frames):");
        slowReleaseStacks.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(4)
                .forEach(e -> System.out.println("    " + e.getValue() + "  " + e.getKey()));
    }

    private String percentiles(long[] nanos) {
        long[] sorted = Arrays.copyOf(nanos, samples);
        Arrays.sort(sorted);
        return String.format(
                "p50 %.1f  p99 %.1f  p99.9 %.1f",
                at(sorted, 0.50) / 1e3, at(sorted, 0.99) / 1e3, at(sorted, 0.999) / 1e3);
    }

    private static long at(long[] sorted, double quantile) {
        return sorted.length == 0 ? 0L : sorted[(int) Math.min(sorted.length - 1, quantile * sorted.length)];
    }
}
