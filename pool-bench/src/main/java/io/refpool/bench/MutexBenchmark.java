package io.refpool.bench;

import com.ibm.asyncutil.locks.AsyncLock;
import com.ibm.asyncutil.locks.FairAsyncLock;
import io.refpool.sync.AsyncMutex;
import io.refpool.sync.Guard;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link AsyncMutex} against the JDK's locks and asyncutil's {@code FairAsyncLock}.
 *
 * <pre>{@code
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main MutexBenchmark -prof gc
 * }</pre>
 *
 * <ul>
 *   <li>{@code tryLockUnlock}: the uncontended try-lock and unlock pair, one thread (ns/op).
 *   <li>{@code blockingAcquireRelease}: an uncontended acquire that may park, then release; refpool's
 *       {@code acquireBlocking().close()} (ns/op).
 *   <li>{@code asyncAcquireRelease}: an uncontended async acquire whose continuation releases;
 *       refpool's {@code acquire().thenAccept(Guard::close)}, asyncutil's {@code acquireLock()} and
 *       {@code releaseLock()}; the blocking peers lock and unlock, their nearest equivalent (ns/op).
 *   <li>{@code handoff}: two threads, each acquiring, doing a little work and releasing in a loop,
 *       so that the lock passes between them; time per acquire-release cycle of each thread (ns/op).
 *       The fair locks hand over on every release once the other thread waits; the unfair
 *       {@code ReentrantLock} lets the releasing thread barge back in, which the row shows.
 *   <li>{@code contended}: every thread acquires, works a little, releases; throughput (ops/us),
 *       {@link Scales run once per thread count}: the lock is always wanted (100% duty).
 *   <li>{@code queueAndTimeOut}: the lock is held for the whole run by a thread of its own; every
 *       benchmark thread calls a timed acquire of one nanosecond, which joins the queue, times out
 *       and leaves it (ns/op), {@link Scales run once per thread count}. It measures the queue
 *       itself: refpool links and unlinks its waiter under the queue's own lock, the JDK's
 *       synchronizers with a compare-and-set on the tail and a cancelled node left for the next
 *       traversal to unlink ({@code impl}: {@code refpool}, {@code fair-reentrant-lock},
 *       {@code fair-semaphore}). {@code ahead} threads (0 or 256) wait in line before the run
 *       starts and stay parked in it, so each timed acquire joins and leaves a queue that deep.
 *   <li>{@code contendedThink}: as {@code contended}, then {@code think} tokens of
 *       {@link Blackhole#consumeCPU} outside the lock (0, 100, 1000: none, roughly a hundred
 *       nanoseconds, roughly a microsecond), so a waiter's spin can meet the holder's release and
 *       a park per handoff shows.
 * </ul>
 *
 * <p>Implementations ({@code impl}): {@code refpool}; {@code reentrant-lock} and
 * {@code fair-reentrant-lock}, {@link ReentrantLock} unfair and fair; {@code fair-semaphore}, a
 * {@code Semaphore(1, true)}; {@code asyncutil}, {@link FairAsyncLock}, whose blocking rows join its
 * future. Each fork runs one implementation, so the calls below stay monomorphic.
 */
@Fork(1)
public class MutexBenchmark extends AverageTimeDefaults {
    /** Work done while holding the lock in the multi-threaded rows, in {@link Blackhole#consumeCPU} tokens. */
    static final int WORK = 20;

    /** One mutual-exclusion lock, reduced to the operations the rows measure. */
    interface Lock {
        boolean tryLock();

        void unlock();

        /** Acquires, parking if needed, and releases. */
        void blockingAcquireRelease() throws InterruptedException;

        /** Acquires asynchronously and releases from the continuation. */
        void asyncAcquireRelease();

        /** Acquires, parking if needed, runs {@code work}, releases. */
        void withLock(Runnable work) throws InterruptedException;
    }

    static final class Refpool implements Lock {
        private final AsyncMutex mutex = new AsyncMutex();

        @Override
        public boolean tryLock() {
            return mutex.tryLock();
        }

        @Override
        public void unlock() {
            mutex.unlock();
        }

        @Override
        public void blockingAcquireRelease() throws InterruptedException {
            mutex.acquireBlocking().close();
        }

        @Override
        public void asyncAcquireRelease() {
            mutex.acquire().thenAccept(Guard::close);
        }

        @Override
        public void withLock(Runnable work) throws InterruptedException {
            Guard guard = mutex.acquireBlocking();
            try {
                work.run();
            } finally {
                guard.close();
            }
        }
    }

    static final class JdkLock implements Lock {
        private final ReentrantLock lock;

        JdkLock(boolean fair) {
            this.lock = new ReentrantLock(fair);
        }

        @Override
        public boolean tryLock() {
            return lock.tryLock();
        }

        @Override
        public void unlock() {
            lock.unlock();
        }

        @Override
        public void blockingAcquireRelease() {
            lock.lock();
            lock.unlock();
        }

        @Override
        public void asyncAcquireRelease() {
            blockingAcquireRelease();
        }

        @Override
        public void withLock(Runnable work) {
            lock.lock();
            try {
                work.run();
            } finally {
                lock.unlock();
            }
        }
    }

    static final class FairSemaphore implements Lock {
        private final Semaphore semaphore = new Semaphore(1, true);

        @Override
        public boolean tryLock() {
            return semaphore.tryAcquire();
        }

        @Override
        public void unlock() {
            semaphore.release();
        }

        @Override
        public void blockingAcquireRelease() throws InterruptedException {
            semaphore.acquire();
            semaphore.release();
        }

        @Override
        public void asyncAcquireRelease() {
            semaphore.acquireUninterruptibly();
            semaphore.release();
        }

        @Override
        public void withLock(Runnable work) throws InterruptedException {
            semaphore.acquire();
            try {
                work.run();
            } finally {
                semaphore.release();
            }
        }
    }

    static final class AsyncUtil implements Lock {
        private final FairAsyncLock lock = new FairAsyncLock();
        private AsyncLock.LockToken held;

        @Override
        public boolean tryLock() {
            Optional<AsyncLock.LockToken> token = lock.tryLock();
            held = token.orElse(null);
            return token.isPresent();
        }

        @Override
        public void unlock() {
            held.releaseLock();
        }

        @Override
        public void blockingAcquireRelease() {
            lock.acquireLock().toCompletableFuture().join().releaseLock();
        }

        @Override
        public void asyncAcquireRelease() {
            lock.acquireLock().thenAccept(AsyncLock.LockToken::releaseLock);
        }

        @Override
        public void withLock(Runnable work) {
            AsyncLock.LockToken token = lock.acquireLock().toCompletableFuture().join();
            try {
                work.run();
            } finally {
                token.releaseLock();
            }
        }
    }

    /** The lock under test, shared by every thread of a run. */
    @State(Scope.Benchmark)
    public static class Subject {
        @Param({"refpool", "reentrant-lock", "fair-reentrant-lock", "fair-semaphore", "asyncutil"})
        public String impl;

        Lock lock;

        @Setup
        public void create() {
            lock = create(impl);
        }

        static Lock create(String impl) {
            return switch (impl) {
                case "refpool" -> new Refpool();
                case "reentrant-lock" -> new JdkLock(false);
                case "fair-reentrant-lock" -> new JdkLock(true);
                case "fair-semaphore" -> new FairSemaphore();
                case "asyncutil" -> new AsyncUtil();
                default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
            };
        }
    }

    private static final Runnable LITTLE_WORK = () -> Blackhole.consumeCPU(WORK);

    /**
     * CPU time per operation of {@link #contendedThink}, so that what spinning costs shows beside the
     * throughput it buys: each benchmark thread counts its operations and its own CPU time (read
     * every 1,024 operations, so the reading does not weigh on the row), reported by JMH as the
     * secondary results {@code ops} and {@code cpuNanos}; the runner shows their ratio.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class CpuTime {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

        public long ops;
        public long cpuNanos;
        private long start;

        @Setup(Level.Iteration)
        public void start() {
            ops = 0;
            cpuNanos = 0;
            start = THREADS.getCurrentThreadCpuTime();
        }

        void count() {
            if ((++ops & 1023) == 0) {
                cpuNanos = THREADS.getCurrentThreadCpuTime() - start;
            }
        }
    }

    /**
     * A lock held for the whole trial by a thread of its own, so that every timed acquire of the
     * benchmark threads queues. The peers are the JDK synchronizers whose timed acquire enqueues.
     */
    @State(Scope.Benchmark)
    public static class Held {
        private static final Duration ONE_NANO = Duration.ofNanos(1);

        @Param({"refpool", "fair-reentrant-lock", "fair-semaphore"})
        public String impl;

        /** Threads that wait in line, parked, for the whole trial, ahead of every timed acquire. */
        @Param({"0", "256"})
        public int ahead;

        private AsyncMutex mutex;
        private ReentrantLock lock;
        private Semaphore semaphore;
        private final CountDownLatch taken = new CountDownLatch(1);
        private final CountDownLatch done = new CountDownLatch(1);
        private Thread holder;
        private final List<Thread> waiting = new ArrayList<>();

        @Setup(Level.Trial)
        public void hold() throws InterruptedException {
            Runnable holding;
            switch (impl) {
                case "refpool":
                    mutex = new AsyncMutex();
                    holding = () -> {
                        if (!mutex.tryLock()) {
                            throw new IllegalStateException("the fresh mutex is held");
                        }
                        awaitDone();
                        mutex.unlock();
                    };
                    break;
                case "fair-reentrant-lock":
                    lock = new ReentrantLock(true);
                    holding = () -> {
                        lock.lock();
                        awaitDone();
                        lock.unlock();
                    };
                    break;
                case "fair-semaphore":
                    semaphore = new Semaphore(1, true);
                    holding = () -> {
                        semaphore.acquireUninterruptibly();
                        awaitDone();
                        semaphore.release();
                    };
                    break;
                default:
                    throw new IllegalArgumentException("unknown impl '" + impl + "'");
            }
            holder = new Thread(holding, "lock-holder");
            holder.setDaemon(true);
            holder.start();
            taken.await();
            for (int i = 0; i < ahead; i++) {
                Thread waiter = new Thread(this::waitInLine, "waiting-" + i);
                waiter.setDaemon(true);
                waiter.start();
                waiting.add(waiter);
            }
            while (queueLength() < ahead) {
                Thread.sleep(1); // setup only: the line fills as the threads start
            }
        }

        /** Waits in line until the holder lets go, then passes the lock on. */
        private void waitInLine() {
            switch (impl) {
                case "refpool":
                    try {
                        mutex.acquireBlocking().close();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    break;
                case "fair-reentrant-lock":
                    lock.lock();
                    lock.unlock();
                    break;
                default:
                    semaphore.acquireUninterruptibly();
                    semaphore.release();
            }
        }

        private int queueLength() {
            switch (impl) {
                case "refpool":
                    return mutex.queueLength();
                case "fair-reentrant-lock":
                    return lock.getQueueLength();
                default:
                    return semaphore.getQueueLength();
            }
        }

        private void awaitDone() {
            taken.countDown();
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @TearDown(Level.Trial)
        public void release() throws InterruptedException {
            done.countDown();
            holder.join();
            for (Thread waiter : waiting) {
                waiter.join();
            }
        }

        /** A timed acquire that queues and times out; {@code true} would be a broken benchmark. */
        boolean queueAndTimeOut() throws InterruptedException {
            switch (impl) {
                case "refpool":
                    return mutex.tryAcquire(ONE_NANO).isPresent();
                case "fair-reentrant-lock":
                    return lock.tryLock(1, TimeUnit.NANOSECONDS);
                default:
                    return semaphore.tryAcquire(1, TimeUnit.NANOSECONDS);
            }
        }
    }

    /** Work outside the lock between two acquires of one thread, in {@link Blackhole#consumeCPU} tokens. */
    @State(Scope.Benchmark)
    public static class Think {
        @Param({"0", "100", "1000"})
        public int think;
    }

    @Benchmark
    public void tryLockUnlock(Subject subject) {
        Lock lock = subject.lock;
        if (!lock.tryLock()) {
            throw new IllegalStateException("uncontended tryLock failed");
        }
        lock.unlock();
    }

    @Benchmark
    public void blockingAcquireRelease(Subject subject) throws InterruptedException {
        subject.lock.blockingAcquireRelease();
    }

    @Benchmark
    public void asyncAcquireRelease(Subject subject) {
        subject.lock.asyncAcquireRelease();
    }

    @Benchmark
    @Group("handoff")
    @GroupThreads(2)
    public void handoff(Subject subject) throws InterruptedException {
        subject.lock.withLock(LITTLE_WORK);
    }

    @Benchmark
    @Scales
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void contended(Subject subject) throws InterruptedException {
        subject.lock.withLock(LITTLE_WORK);
    }

    @Benchmark
    @Scales
    public void queueAndTimeOut(Held held) throws InterruptedException {
        if (held.queueAndTimeOut()) {
            throw new IllegalStateException("acquired a lock another thread holds: " + held.impl);
        }
    }

    @Benchmark
    @Scales
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void contendedThink(Subject subject, Think think, CpuTime cpu) throws InterruptedException {
        subject.lock.withLock(LITTLE_WORK);
        Blackhole.consumeCPU(think.think);
        cpu.count();
    }
}
