package io.refpool.bench;

import io.refpool.bench.baseline.AlwaysLockReleaseQueue;
import io.refpool.bench.baseline.BaselineReleaseQueue;
import io.refpool.bench.baseline.SwapFlagReleaseQueue;
import io.refpool.bench.baseline.UnpaddedReleaseQueue;
import io.refpool.core.AttachMode;
import io.refpool.core.AttachedWork;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.RefPool;
import io.refpool.core.internal.ReleaseQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The project's headline: what attaching costs, and how it scales with threads.
 *
 * <pre>{@code
 * java -jar pool-bench/target/pool-bench.jar attach        # the runner: 1, 2, 4 threads, -prof gc
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main AttachBenchmark -t 2 -prof gc
 * }</pre>
 *
 * <p><b>{@code nested}</b> (walltime throughput, ops/s) is modelled on the nested-attach scaling
 * benchmark that motivated the design: each benchmark thread does a nested attach and close, a
 * per-thread depth bump around the release queue's check. The queues are driven directly, by the
 * same code, so the rows differ only in the check ({@code impl}):
 *
 * <ul>
 *   <li>{@code refpool}: refpool's {@link ReleaseQueue}, one acquire load of a padded flag;
 *   <li>{@code always-lock}: {@link AlwaysLockReleaseQueue}, the queue's lock taken on every attach;
 *   <li>{@code swap-flag}: {@link SwapFlagReleaseQueue}, an atomic {@code getAndSet} of a flag on
 *       every attach.
 * </ul>
 *
 * <p>The {@code state} parameter is what is pending: {@code empty}, nothing ever; {@code sparse}, a
 * background daemon thread enqueues releases at about 20,000 per second, so attaching threads now
 * and then find the flag up and drain. {@code nestedPool} is the pool's own nested
 * {@code attach()} and {@code close()} in a {@code SHARED} pool, with nothing pending
 * ({@code empty}) or while a releaser closes handles off-attachment at the same pace
 * ({@code sparse}): the whole attach path around that check. {@code nestedClosure} is the same
 * nested attach in its closure form, {@code pool.attached(work)}, which opens no attachment object.
 *
 * <p>{@code nested}, {@code nestedLayout}, {@code nestedPool} and {@code nestedClosure} are {@link Scales}: the runner runs
 * them at 1, 2 and 4 threads. On a 2-core machine, 4 threads (plus the sparse enqueuer) oversubscribe
 * the cores; that row shows behaviour under oversubscription, not scaling. {@code nestedLayout} runs
 * with the flag padded ({@code refpool}) and unpadded ({@code unpadded}, {@link UnpaddedReleaseQueue}:
 * the same protocol, the flag next to the queue's lock, list and size) while another thread
 * enqueues one release at a time ({@code sparse}) or 64 back to back each millisecond
 * ({@code burst}), writing the lines next to an unpadded flag while attachers read it.
 *
 * <p><b>{@code topLevel}</b> (ns/op) is an uncontended outermost {@code attach()} and
 * {@code close()} in each mode — the gate's {@code tryLock} pair and the check — against
 * {@link ReentrantLock#lock()} and {@link ReentrantLock#unlock()} (the {@code mode} parameter does
 * not apply to the lock); {@code closure} is the outermost {@code pool.attached(work)}. <b>{@code shareAndClose}</b> (ns/op, with {@code -prof gc} for bytes/op)
 * opens a handle with {@code share()} and closes it, attached (the count drops at once) or detached
 * (a pending decrement; one attach per 256 closes applies them, and its cost is part of the
 * figure), so the difference is what deferring a release costs.
 *
 * <p>The results and the targets they are held to are in {@code docs/design.md}. The annotations
 * below only matter when JMH runs the class directly; the runner sets forks, iterations and thread
 * counts itself and adds {@code -prof gc}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class AttachBenchmark {
    private static final String SPARSE_KEY = "sparse";

    /** {@return a pool with the defaults and {@code mode}} */
    static RefPool<String, Object> newPool(AttachMode mode) {
        return RefPool.builder((String key) -> new Object()).attachMode(mode).build();
    }

    // ---------------------------------------------------------------- nested attach, scaling

    /**
     * A release queue under test, driven the same way whatever its design: refpool's own
     * {@link ReleaseQueue} or a baseline copy with another check.
     */
    interface QueueUnderTest {
        int enqueue(Object release);

        ArrayList<?> takeIfDirty();
    }

    static QueueUnderTest queue(String impl) {
        if (impl.equals("refpool")) {
            ReleaseQueue<Object> queue = new ReleaseQueue<>();
            return new QueueUnderTest() {
                @Override
                public int enqueue(Object release) {
                    return queue.enqueue(release);
                }

                @Override
                public ArrayList<?> takeIfDirty() {
                    ReleaseQueue.Batch<Object> batch = queue.takeIfDirty();
                    if (batch != null) {
                        queue.completed(batch); // applied by the caller, at once: the pool's bookkeeping
                    }
                    return batch;
                }
            };
        }
        BaselineReleaseQueue baseline =
                switch (impl) {
                    case "always-lock" -> new AlwaysLockReleaseQueue();
                    case "swap-flag" -> new SwapFlagReleaseQueue();
                    case "unpadded" -> new UnpaddedReleaseQueue();
                    default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
                };
        return new QueueUnderTest() {
            @Override
            public int enqueue(Object release) {
                return baseline.enqueue(release);
            }

            @Override
            public ArrayList<?> takeIfDirty() {
                return baseline.takeIfDirty();
            }
        };
    }

    /**
     * The nested attach every queue design gets: a per-thread depth bump, the queue's check, and
     * applying what it took; the same code whatever the queue, so the rows measure the check.
     */
    abstract static class ScalingQueue {
        QueueUnderTest queue;
        final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
        private SparseEnqueuer enqueuer;

        void start(String impl, String state) {
            queue = queue(impl);
            switch (state) {
                case "empty":
                    break;
                case "sparse":
                    enqueuer = new SparseEnqueuer(queue, 1);
                    enqueuer.start();
                    break;
                case "burst":
                    enqueuer = new SparseEnqueuer(queue, SparseEnqueuer.BURST);
                    enqueuer.start();
                    break;
                default:
                    throw new IllegalArgumentException("unknown state '" + state + "'");
            }
        }

        void stop() throws InterruptedException {
            if (enqueuer != null) {
                enqueuer.stop();
            }
        }

        /** {@return how many pending releases this nested attach applied} */
        int nestedAttachAndClose() {
            int[] d = depth.get();
            d[0]++;
            ArrayList<?> batch = queue.takeIfDirty();
            int applied = batch == null ? 0 : batch.size();
            d[0]--;
            return applied;
        }
    }

    /** The queue of {@code nested}. */
    @State(Scope.Benchmark)
    public static class NestedQueue extends ScalingQueue {
        @Param({"refpool", "always-lock", "swap-flag"})
        public String impl;

        @Param({"empty", "sparse"})
        public String state;

        /** Builds the queue, and starts the enqueuer in state {@code sparse}. */
        @Setup(Level.Trial)
        public void setUp() {
            start(impl, state);
        }

        /** Stops the enqueuer. */
        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            stop();
        }
    }

    /**
     * The queue of {@code nestedLayout}, padded or not, while another core enqueues: one by one
     * ({@code sparse}) or in bursts that write the queue's lock, list and size back to back while
     * the attachers read the flag ({@code burst}).
     */
    @State(Scope.Benchmark)
    public static class LayoutQueue extends ScalingQueue {
        @Param({"refpool", "unpadded"})
        public String impl;

        @Param({"sparse", "burst"})
        public String state;

        /** Builds the queue and starts the enqueuer. */
        @Setup(Level.Trial)
        public void setUp() {
            start(impl, state);
        }

        /** Stops the enqueuer. */
        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            stop();
        }
    }

    /**
     * A nested attach and close: the per-thread depth, then the release queue's check (and, now
     * and then in state {@code sparse}, a drain).
     *
     * @param queue the queue
     * @return what the check applied
     */
    @Benchmark
    @Scales
    public int nested(NestedQueue queue) {
        return queue.nestedAttachAndClose();
    }

    /**
     * The same nested attach and close while releases arrive one by one or in bursts, with the flag
     * padded or not.
     *
     * @param queue the queue
     * @return what the check applied
     */
    @Benchmark
    @Scales
    public int nestedLayout(LayoutQueue queue) {
        return queue.nestedAttachAndClose();
    }

    /**
     * A {@code SHARED} pool for {@code nestedPool} and {@code nestedClosure}; in state
     * {@code sparse} a releaser closes handles off-attachment.
     */
    @State(Scope.Benchmark)
    public static class NestedPool {
        @Param({"empty", "sparse"})
        public String state;

        RefPool<String, Object> pool;
        private SparseReleaser releaser;

        /** Builds the pool and, in state {@code sparse}, starts the releaser. */
        @Setup(Level.Trial)
        public void setUp() {
            pool = newPool(AttachMode.SHARED);
            if (state.equals("sparse")) {
                releaser = new SparseReleaser(pool);
                releaser.start();
            } else if (!state.equals("empty")) {
                throw new IllegalArgumentException("unknown state '" + state + "'");
            }
        }

        /** Stops the releaser and closes the pool. */
        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            if (releaser != null) {
                releaser.stop();
            }
            pool.close();
        }
    }

    /** A benchmark thread's outer attachment, held for the iteration, on that thread. */
    @State(Scope.Thread)
    public static class NestedOuter {
        Attachment outer;

        /** Attaches the benchmark thread. */
        @Setup(Level.Iteration)
        public void attach(NestedPool pool) {
            outer = pool.pool.attach();
        }

        /** Detaches it. */
        @TearDown(Level.Iteration)
        public void detach() {
            outer.close();
        }
    }

    /**
     * The pool's own nested attach and close, releases pending now and then: the whole attach
     * path around the check of {@code nested}.
     *
     * @param pool the pool
     * @param outer the thread's outer attachment
     */
    @Benchmark
    @Scales
    public void nestedPool(NestedPool pool, NestedOuter outer) {
        pool.pool.attach().close();
    }

    private static final AttachedWork<Object, RuntimeException> NOTHING = () -> null;

    /**
     * The closure form of the same nested attach, {@code pool.attached(work)}: no attachment object,
     * so only the thread's depth moves around the check.
     *
     * @param pool the pool
     * @param outer the thread's outer attachment
     * @return what the work returned
     */
    @Benchmark
    @Scales
    public Object nestedClosure(NestedPool pool, NestedOuter outer) {
        return pool.pool.attached(NOTHING);
    }

    /**
     * Enqueues releases on a thread of its own: one at a time at about
     * {@link SparseReleaser#CLOSES_PER_SECOND} per second, or {@link #BURST} back to back once a
     * millisecond.
     */
    static final class SparseEnqueuer extends PacedThread {
        static final int BURST = 64;
        private final QueueUnderTest queue;
        private final int perWake;
        private final long intervalNanos;

        SparseEnqueuer(QueueUnderTest queue, int perWake) {
            super("sparse-enqueuer");
            this.queue = queue;
            this.perWake = perWake;
            this.intervalNanos = perWake == 1
                    ? TimeUnit.SECONDS.toNanos(1) / SparseReleaser.CLOSES_PER_SECOND
                    : TimeUnit.MILLISECONDS.toNanos(1);
        }

        @Override
        public void run() {
            Object release = new Object();
            long next = System.nanoTime();
            while (running) {
                next = pace(next + intervalNanos);
                for (int i = 0; i < perWake; i++) {
                    queue.enqueue(release);
                }
            }
        }
    }

    /** A daemon thread running a paced loop until stopped; behind schedule it drops the backlog. */
    abstract static class PacedThread implements Runnable {
        /** Further behind schedule than this, the loop drops the backlog instead of bursting. */
        private static final long MAX_LAG_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

        private final Thread thread;
        volatile boolean running = true;

        PacedThread(String name) {
            this.thread = new Thread(this, name);
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            LockSupport.unpark(thread);
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }

        /** Parks until {@code next} (a {@code nanoTime}); {@return the schedule to continue from} */
        long pace(long next) {
            long wait = next - System.nanoTime();
            if (wait > 0 && running) {
                LockSupport.parkNanos(wait);
            } else if (wait < -MAX_LAG_NANOS) {
                return System.nanoTime();
            }
            return next;
        }
    }

    /**
     * Closes handles off-attachment at about {@link #CLOSES_PER_SECOND} per second on a daemon
     * thread of its own, acquiring them in batches through a short attached section.
     */
    static final class SparseReleaser extends PacedThread {
        static final long CLOSES_PER_SECOND = 20_000;
        private static final int BATCH = 100;
        private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1) / CLOSES_PER_SECOND;

        private final RefPool<String, Object> pool;

        SparseReleaser(RefPool<String, Object> pool) {
            super("sparse-releaser");
            this.pool = pool;
        }

        @Override
        public void run() {
            // held throughout, so the closes below never take the object to zero and re-create it
            Handle<Object> keepAlive;
            Attachment first = pool.attach();
            try {
                keepAlive = pool.acquire(SPARSE_KEY);
            } finally {
                first.close();
            }
            List<Handle<Object>> batch = new ArrayList<>(BATCH);
            long next = System.nanoTime();
            while (running) {
                Attachment attached = pool.attach();
                try {
                    for (int i = 0; i < BATCH; i++) {
                        batch.add(pool.acquire(SPARSE_KEY));
                    }
                } finally {
                    attached.close();
                }
                for (Handle<Object> handle : batch) {
                    next = pace(next + INTERVAL_NANOS);
                    handle.close(); // detached: a pending decrement for the attaching threads
                }
                batch.clear();
            }
            keepAlive.close();
        }
    }

    // ---------------------------------------------------------------- top-level attach

    /** An uncontended outermost attach in either mode, or a {@link ReentrantLock}. */
    @State(Scope.Thread)
    public static class TopLevel {
        @Param({"refpool", "closure", "reentrant-lock"})
        public String impl;

        @Param({"GLOBAL", "SHARED"})
        public String mode;

        RefPool<String, Object> pool;
        ReentrantLock lock;
        boolean closure;

        /** Builds the pool or the lock. */
        @Setup(Level.Trial)
        public void setUp() {
            switch (impl) {
                case "refpool":
                    pool = newPool(AttachMode.valueOf(mode));
                    break;
                case "closure":
                    pool = newPool(AttachMode.valueOf(mode));
                    closure = true;
                    break;
                case "reentrant-lock":
                    lock = new ReentrantLock();
                    break;
                default:
                    throw new IllegalArgumentException("unknown impl '" + impl + "'");
            }
        }

        /** Closes the pool. */
        @TearDown(Level.Trial)
        public void tearDown() {
            if (pool != null) {
                pool.close();
            }
        }
    }

    /**
     * An outermost attach and close with nothing pending and nobody else attached, or
     * {@code lock()} and {@code unlock()} of an uncontended {@link ReentrantLock}.
     *
     * @param s the pool or the lock
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public Object topLevel(TopLevel s) {
        ReentrantLock lock = s.lock;
        if (lock != null) {
            lock.lock();
            lock.unlock();
            return null;
        } else if (s.closure) {
            return s.pool.attached(NOTHING);
        } else {
            s.pool.attach().close();
            return null;
        }
    }

    // ---------------------------------------------------------------- attached versus deferred close

    /** A held handle to share from, and where its shares are closed. */
    @State(Scope.Thread)
    public static class Closing {
        /** Closes applied between two attaches in {@code detached}; bounds the pending list. */
        static final int APPLY_EVERY = 256;

        @Param({"attached", "detached"})
        public String where;

        RefPool<String, Object> pool;
        Handle<Object> held;
        boolean detached;
        int sinceApply;
        private Attachment attachment;

        /** Builds a pool whose drainer stays out of the way, and opens the handle to share from. */
        @Setup(Level.Trial)
        public void setUp() {
            pool = RefPool.builder((String key) -> new Object())
                    .attachMode(AttachMode.GLOBAL)
                    .drainDelay(Duration.ofHours(1))
                    .drainThreshold(Integer.MAX_VALUE)
                    .build();
            Attachment attached = pool.attach();
            try {
                held = pool.acquire("k");
            } finally {
                attached.close();
            }
            detached = where.equals("detached");
        }

        /** Attaches the thread for the iteration, when closing attached. */
        @Setup(Level.Iteration)
        public void attach() {
            if (!detached) {
                attachment = pool.attach();
            }
        }

        /** Detaches it, or applies what is still pending. */
        @TearDown(Level.Iteration)
        public void detach() {
            if (attachment != null) {
                attachment.close();
                attachment = null;
            } else {
                pool.attach().close();
            }
        }

        /** Closes the held handle and the pool. */
        @TearDown(Level.Trial)
        public void tearDown() {
            Attachment attached = pool.attach();
            try {
                held.close();
            } finally {
                attached.close();
            }
            pool.close();
        }
    }

    /**
     * {@code share()} and {@code close()} of a handle, attached or detached (then with a share of
     * the attach that applies the pending decrements).
     *
     * @param s the handle and where it is closed
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public void shareAndClose(Closing s) {
        s.held.share().close();
        if (s.detached && ++s.sinceApply == Closing.APPLY_EVERY) {
            s.sinceApply = 0;
            s.pool.attach().close();
        }
    }
}
