package io.refpool.bench;

import com.ibm.asyncutil.locks.AsyncReadWriteLock;
import com.ibm.asyncutil.locks.FairAsyncReadWriteLock;
import io.refpool.sync.AsyncSharedMutex;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.ReaderBiasedSharedMutex;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.StampedLock;
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
 * {@link AsyncSharedMutex} against the JDK's reader-writer locks and asyncutil's
 * {@code FairAsyncReadWriteLock}.
 *
 * <pre>{@code
 * java -jar pool-bench/target/pool-bench.jar shared
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main SharedMutexBenchmark -prof gc
 * }</pre>
 *
 * <ul>
 *   <li>{@code sharedAcquireRelease}: an uncontended shared acquire that may park, then release, one
 *       thread; refpool's {@code acquireSharedBlocking().close()}, asyncutil's joined
 *       {@code acquireReadLock()} (ns/op).
 *   <li>{@code tryLockSharedUnlockShared}: the uncontended shared try and release pair, one thread
 *       (ns/op).
 *   <li>{@code tryReaders}: every thread takes the shared try pair (the attach gate's path), works a
 *       little, releases; no writer. Throughput (ops/us), {@link Scales run once per thread count}:
 *       what a reader's write to shared memory costs as cores are added.
 *   <li>{@code readers}: every thread takes the lock shared, works a little, releases; no writer.
 *       Throughput (ops/us), {@link Scales run once per thread count}: what the shared count costs
 *       as readers are added.
 *   <li>{@code mixed11}, {@code mixed90} and {@code mixed50}: readers and writers in a fixed ratio
 *       of threads (1 to 1 on the two threads a 2-core machine runs at once; 9 to 1 and 2 to 2,
 *       oversubscribed), each taking the lock, working a little inside and a little outside, in a
 *       loop. Each group runs twice: sampled ({@code Mode.SampleTime}), for the latency of each
 *       acquire-work-release, and in {@code Mode.Throughput}, for the operations of all threads
 *       together (ops/us). The runner reports the group and each of its methods on a line of its
 *       own: the writer's p50 and p99 show what the queue order buys it, the readers' what it costs
 *       them, and the group's throughput what the whole mix gets done.
 *   <li>{@code handoff}: one writer and three readers with no work outside the lock, so the lock
 *       keeps passing from the writer to the batch of readers queued behind it and back; time per
 *       acquire-release cycle of each thread (ns/op).
 * </ul>
 *
 * <p>Implementations ({@code impl}): {@code refpool}; {@code refpool-biased},
 * {@link ReaderBiasedSharedMutex} through its try pair first, as the attach gate uses it; {@code rrwl} and {@code fair-rrwl},
 * {@link ReentrantReadWriteLock} unfair and fair; {@code stamped}, {@link StampedLock}'s
 * pessimistic read and write locks, the floor: no fairness, no reentrance, no queue order; {@code
 * asyncutil}, {@link FairAsyncReadWriteLock}, whose blocking rows join its futures. Each fork runs
 * one implementation, so the calls below stay monomorphic.
 */
@Fork(1)
public class SharedMutexBenchmark extends AverageTimeDefaults {
    /** Work done while holding the lock, and between two acquires, in {@link Blackhole#consumeCPU} tokens. */
    static final int WORK = 20;

    /** One reader-writer lock, reduced to the operations the rows measure. */
    interface SharedLock {
        boolean tryLockShared();

        void unlockShared();

        /** Acquires shared, parking if needed, and releases. */
        void sharedAcquireRelease() throws InterruptedException;

        /** Acquires shared, parking if needed, works {@code tokens}, releases. */
        void readLocked(long tokens) throws InterruptedException;

        /** Acquires exclusively, parking if needed, works {@code tokens}, releases. */
        void writeLocked(long tokens) throws InterruptedException;
    }

    static final class Refpool implements SharedLock {
        private final AsyncSharedMutex lock = new AsyncSharedMutex();

        @Override
        public boolean tryLockShared() {
            return lock.tryLockShared();
        }

        @Override
        public void unlockShared() {
            lock.unlockShared();
        }

        @Override
        public void sharedAcquireRelease() throws InterruptedException {
            lock.acquireSharedBlocking().close();
        }

        @Override
        public void readLocked(long tokens) throws InterruptedException {
            Guard shared = lock.acquireSharedBlocking();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                shared.close();
            }
        }

        @Override
        public void writeLocked(long tokens) throws InterruptedException {
            Guard exclusive = lock.acquireBlocking();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                exclusive.close();
            }
        }
    }

    /**
     * {@link ReaderBiasedSharedMutex} as the attach gate uses it: the biased try pair first, the
     * queued shared acquire only if a writer holds or waits.
     */
    static final class Biased implements SharedLock {
        private final ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();

        @Override
        public boolean tryLockShared() {
            return lock.tryLockShared();
        }

        @Override
        public void unlockShared() {
            lock.unlockShared();
        }

        @Override
        public void sharedAcquireRelease() throws InterruptedException {
            if (lock.tryLockShared()) {
                lock.unlockShared();
            } else {
                lock.acquireSharedBlocking(CancellationToken.none()).close();
            }
        }

        @Override
        public void readLocked(long tokens) throws InterruptedException {
            if (lock.tryLockShared()) {
                try {
                    Blackhole.consumeCPU(tokens);
                } finally {
                    lock.unlockShared();
                }
                return;
            }
            Guard shared = lock.acquireSharedBlocking(CancellationToken.none());
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                shared.close();
            }
        }

        @Override
        public void writeLocked(long tokens) throws InterruptedException {
            Guard exclusive = lock.acquireBlocking();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                exclusive.close();
            }
        }
    }

    static final class JdkReadWriteLock implements SharedLock {
        private final ReentrantReadWriteLock.ReadLock read;
        private final ReentrantReadWriteLock.WriteLock write;

        JdkReadWriteLock(boolean fair) {
            ReentrantReadWriteLock lock = new ReentrantReadWriteLock(fair);
            this.read = lock.readLock();
            this.write = lock.writeLock();
        }

        @Override
        public boolean tryLockShared() {
            return read.tryLock();
        }

        @Override
        public void unlockShared() {
            read.unlock();
        }

        @Override
        public void sharedAcquireRelease() throws InterruptedException {
            read.lockInterruptibly();
            read.unlock();
        }

        @Override
        public void readLocked(long tokens) throws InterruptedException {
            read.lockInterruptibly();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                read.unlock();
            }
        }

        @Override
        public void writeLocked(long tokens) throws InterruptedException {
            write.lockInterruptibly();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                write.unlock();
            }
        }
    }

    static final class Stamped implements SharedLock {
        private final StampedLock lock = new StampedLock();
        private long heldStamp;

        @Override
        public boolean tryLockShared() {
            heldStamp = lock.tryReadLock();
            return heldStamp != 0L;
        }

        @Override
        public void unlockShared() {
            lock.unlockRead(heldStamp);
        }

        @Override
        public void sharedAcquireRelease() throws InterruptedException {
            lock.unlockRead(lock.readLockInterruptibly());
        }

        @Override
        public void readLocked(long tokens) throws InterruptedException {
            long stamp = lock.readLockInterruptibly();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                lock.unlockRead(stamp);
            }
        }

        @Override
        public void writeLocked(long tokens) throws InterruptedException {
            long stamp = lock.writeLockInterruptibly();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                lock.unlockWrite(stamp);
            }
        }
    }

    static final class AsyncUtil implements SharedLock {
        private final FairAsyncReadWriteLock lock = new FairAsyncReadWriteLock();
        private AsyncReadWriteLock.ReadLockToken heldToken;

        @Override
        public boolean tryLockShared() {
            Optional<AsyncReadWriteLock.ReadLockToken> token = lock.tryReadLock();
            heldToken = token.orElse(null);
            return token.isPresent();
        }

        @Override
        public void unlockShared() {
            heldToken.releaseLock();
        }

        @Override
        public void sharedAcquireRelease() {
            lock.acquireReadLock().toCompletableFuture().join().releaseLock();
        }

        @Override
        public void readLocked(long tokens) {
            AsyncReadWriteLock.ReadLockToken token =
                    lock.acquireReadLock().toCompletableFuture().join();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                token.releaseLock();
            }
        }

        @Override
        public void writeLocked(long tokens) {
            AsyncReadWriteLock.WriteLockToken token =
                    lock.acquireWriteLock().toCompletableFuture().join();
            try {
                Blackhole.consumeCPU(tokens);
            } finally {
                token.releaseLock();
            }
        }
    }

    /** The lock under test, shared by every thread of a run. */
    @State(Scope.Benchmark)
    public static class Subject {
        @Param({"refpool", "refpool-biased", "rrwl", "fair-rrwl", "stamped", "asyncutil"})
        public String impl;

        SharedLock lock;

        @Setup
        public void create() {
            lock = create(impl);
        }

        static SharedLock create(String impl) {
            return switch (impl) {
                case "refpool" -> new Refpool();
                case "refpool-biased" -> new Biased();
                case "rrwl" -> new JdkReadWriteLock(false);
                case "fair-rrwl" -> new JdkReadWriteLock(true);
                case "stamped" -> new Stamped();
                case "asyncutil" -> new AsyncUtil();
                default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
            };
        }
    }

    @Benchmark
    public void sharedAcquireRelease(Subject subject) throws InterruptedException {
        subject.lock.sharedAcquireRelease();
    }

    @Benchmark
    public void tryLockSharedUnlockShared(Subject subject) {
        SharedLock lock = subject.lock;
        if (!lock.tryLockShared()) {
            throw new IllegalStateException("uncontended tryLockShared failed for " + subject.impl);
        }
        lock.unlockShared();
    }

    @Benchmark
    @Scales
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void readers(Subject subject) throws InterruptedException {
        subject.lock.readLocked(WORK);
    }

    /** Every thread takes the shared try pair, the attach gate's path, around a little work; no writer. */
    @Benchmark
    @Scales
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void tryReaders(Subject subject) {
        SharedLock lock = subject.lock;
        if (!lock.tryLockShared()) {
            throw new IllegalStateException("tryLockShared failed with no writer for " + subject.impl);
        }
        try {
            Blackhole.consumeCPU(WORK);
        } finally {
            lock.unlockShared();
        }
    }

    @Benchmark
    @Group("mixed11")
    @GroupThreads(1)
    @BenchmarkMode({Mode.SampleTime, Mode.Throughput})
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void mixed11Reader(Subject subject) throws InterruptedException {
        subject.lock.readLocked(WORK);
        Blackhole.consumeCPU(WORK);
    }

    @Benchmark
    @Group("mixed11")
    @GroupThreads(1)
    @BenchmarkMode({Mode.SampleTime, Mode.Throughput})
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void mixed11Writer(Subject subject) throws InterruptedException {
        subject.lock.writeLocked(WORK);
        Blackhole.consumeCPU(WORK);
    }

    @Benchmark
    @Group("mixed90")
    @GroupThreads(9)
    @BenchmarkMode({Mode.SampleTime, Mode.Throughput})
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void mixed90Reader(Subject subject) throws InterruptedException {
        subject.lock.readLocked(WORK);
        Blackhole.consumeCPU(WORK);
    }

    @Benchmark
    @Group("mixed90")
    @GroupThreads(1)
    @BenchmarkMode({Mode.SampleTime, Mode.Throughput})
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void mixed90Writer(Subject subject) throws InterruptedException {
        subject.lock.writeLocked(WORK);
        Blackhole.consumeCPU(WORK);
    }

    @Benchmark
    @Group("mixed50")
    @GroupThreads(2)
    @BenchmarkMode({Mode.SampleTime, Mode.Throughput})
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void mixed50Reader(Subject subject) throws InterruptedException {
        subject.lock.readLocked(WORK);
        Blackhole.consumeCPU(WORK);
    }

    @Benchmark
    @Group("mixed50")
    @GroupThreads(2)
    @BenchmarkMode({Mode.SampleTime, Mode.Throughput})
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void mixed50Writer(Subject subject) throws InterruptedException {
        subject.lock.writeLocked(WORK);
        Blackhole.consumeCPU(WORK);
    }

    @Benchmark
    @Group("handoff")
    @GroupThreads(1)
    public void handoffWriter(Subject subject) throws InterruptedException {
        subject.lock.writeLocked(WORK);
    }

    @Benchmark
    @Group("handoff")
    @GroupThreads(3)
    public void handoffReaders(Subject subject) throws InterruptedException {
        subject.lock.readLocked(WORK);
    }
}
