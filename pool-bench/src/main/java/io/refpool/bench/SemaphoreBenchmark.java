package io.refpool.bench;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import io.refpool.sync.AsyncSemaphore;
import io.refpool.sync.Guard;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link AsyncSemaphore} against the JDK's fair {@link Semaphore} and asyncutil's
 * {@code FairAsyncSemaphore}, on a semaphore of {@value #PERMITS} permits.
 *
 * <pre>{@code
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main SemaphoreBenchmark -prof gc
 * }</pre>
 *
 * <ul>
 *   <li>{@code tryAcquireRelease}: take one permit without waiting and return it, one thread
 *       (ns/op).
 *   <li>{@code blockingAcquireRelease}: an uncontended acquire of one permit that may park, then
 *       release; refpool's {@code acquireBlocking(1).close()} (ns/op).
 *   <li>{@code asyncAcquireRelease}: an uncontended async acquire of one permit whose continuation
 *       releases it; the JDK semaphore acquires and releases, its nearest equivalent (ns/op).
 *   <li>{@code handoff}: two threads, each taking all {@value #PERMITS} permits, doing a little work
 *       and returning them, so the permits pass between them; time per cycle of each thread
 *       (ns/op).
 *   <li>{@code contended}: every thread takes one permit, works a little, returns it; with more
 *       threads than permits they queue; throughput (ops/us), {@link Scales run once per thread
 *       count}.
 * </ul>
 *
 * <p>Implementations ({@code impl}): {@code refpool}; {@code fair-semaphore}, a
 * {@code Semaphore(PERMITS, true)}; {@code asyncutil}, {@link FairAsyncSemaphore}, whose blocking
 * rows join its future.
 */
@Fork(1)
public class SemaphoreBenchmark extends AverageTimeDefaults {
    /** The permits of every semaphore measured. */
    static final int PERMITS = 2;

    /** One counting semaphore, reduced to the operations the rows measure. */
    interface Permits {
        boolean tryAcquire(int n);

        void release(int n);

        /** Acquires {@code n}, parking if needed, and releases them. */
        void blockingAcquireRelease(int n) throws InterruptedException;

        /** Acquires {@code n} asynchronously and releases them from the continuation. */
        void asyncAcquireRelease(int n);

        /** Acquires {@code n}, parking if needed, runs {@code work}, releases them. */
        void withPermits(int n, Runnable work) throws InterruptedException;
    }

    static final class Refpool implements Permits {
        private final AsyncSemaphore semaphore = new AsyncSemaphore(PERMITS);

        @Override
        public boolean tryAcquire(int n) {
            return semaphore.tryAcquirePermits(n);
        }

        @Override
        public void release(int n) {
            semaphore.release(n);
        }

        @Override
        public void blockingAcquireRelease(int n) throws InterruptedException {
            semaphore.acquireBlocking(n).close();
        }

        @Override
        public void asyncAcquireRelease(int n) {
            semaphore.acquire(n).thenAccept(Guard::close);
        }

        @Override
        public void withPermits(int n, Runnable work) throws InterruptedException {
            Guard guard = semaphore.acquireBlocking(n);
            try {
                work.run();
            } finally {
                guard.close();
            }
        }
    }

    static final class Jdk implements Permits {
        private final Semaphore semaphore = new Semaphore(PERMITS, true);

        @Override
        public boolean tryAcquire(int n) {
            return semaphore.tryAcquire(n);
        }

        @Override
        public void release(int n) {
            semaphore.release(n);
        }

        @Override
        public void blockingAcquireRelease(int n) throws InterruptedException {
            semaphore.acquire(n);
            semaphore.release(n);
        }

        @Override
        public void asyncAcquireRelease(int n) {
            semaphore.acquireUninterruptibly(n);
            semaphore.release(n);
        }

        @Override
        public void withPermits(int n, Runnable work) throws InterruptedException {
            semaphore.acquire(n);
            try {
                work.run();
            } finally {
                semaphore.release(n);
            }
        }
    }

    static final class AsyncUtil implements Permits {
        private final FairAsyncSemaphore semaphore = new FairAsyncSemaphore(PERMITS);

        @Override
        public boolean tryAcquire(int n) {
            return semaphore.tryAcquire(n);
        }

        @Override
        public void release(int n) {
            semaphore.release(n);
        }

        @Override
        public void blockingAcquireRelease(int n) {
            semaphore.acquire(n).toCompletableFuture().join();
            semaphore.release(n);
        }

        @Override
        public void asyncAcquireRelease(int n) {
            semaphore.acquire(n).thenRun(() -> semaphore.release(n));
        }

        @Override
        public void withPermits(int n, Runnable work) {
            semaphore.acquire(n).toCompletableFuture().join();
            try {
                work.run();
            } finally {
                semaphore.release(n);
            }
        }
    }

    /** The semaphore under test, shared by every thread of a run. */
    @State(Scope.Benchmark)
    public static class Subject {
        @Param({"refpool", "fair-semaphore", "asyncutil"})
        public String impl;

        Permits permits;

        @Setup
        public void create() {
            permits = switch (impl) {
                case "refpool" -> new Refpool();
                case "fair-semaphore" -> new Jdk();
                case "asyncutil" -> new AsyncUtil();
                default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
            };
        }
    }

    private static final Runnable LITTLE_WORK = () -> Blackhole.consumeCPU(MutexBenchmark.WORK);

    @Benchmark
    public void tryAcquireRelease(Subject subject) {
        Permits p = subject.permits;
        if (!p.tryAcquire(1)) {
            throw new IllegalStateException("uncontended tryAcquire failed");
        }
        p.release(1);
    }

    @Benchmark
    public void blockingAcquireRelease(Subject subject) throws InterruptedException {
        subject.permits.blockingAcquireRelease(1);
    }

    @Benchmark
    public void asyncAcquireRelease(Subject subject) {
        subject.permits.asyncAcquireRelease(1);
    }

    @Benchmark
    @Group("handoff")
    @GroupThreads(2)
    public void handoff(Subject subject) throws InterruptedException {
        subject.permits.withPermits(PERMITS, LITTLE_WORK);
    }

    @Benchmark
    @Scales
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void contended(Subject subject) throws InterruptedException {
        subject.permits.withPermits(1, LITTLE_WORK);
    }
}
