package io.refpool.bench;

import io.refpool.bench.baseline.CommonsFactory;
import io.refpool.bench.baseline.HandRolledRefPool;
import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.LeakDetection;
import io.refpool.core.RefPool;
import io.refpool.sync.CancellationToken;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.pool2.impl.GenericKeyedObjectPool;
import org.apache.commons.pool2.impl.GenericKeyedObjectPoolConfig;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;
import stormpot.Allocator;
import stormpot.Pool;
import stormpot.PoolTap;
import stormpot.Pooled;
import stormpot.Slot;
import stormpot.Timeout;

/**
 * The keyed pool against the pools a plugin host would use instead, side by side in one run.
 *
 * <pre>
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main PoolBenchmark -prof gc
 * </pre>
 *
 * <p>Three operations, each with every {@code impl}:
 *
 * <ul>
 *   <li>{@link #hotKeyAcquireClose}: acquire and close a handle to a live object (another handle
 *       keeps it live), the thread attached for the whole iteration. It {@linkplain Scales scales}:
 *       the runner runs it at 1, 2 and more threads ({@code -t 2} with plain JMH). refpool runs in
 *       {@code SHARED} mode, so every thread is attached at once.
 *   <li>{@link #idleRevive}: acquire an idle object (count 0, in the idle cache) and close it back
 *       to idle; one thread.
 *   <li>{@link #createDispose}: acquire a key whose object does not exist, so it is created, and
 *       close it, so it is disposed (no idle cache); one thread.
 * </ul>
 *
 * <p>The implementations:
 *
 * <ul>
 *   <li>{@code refpool}: {@link RefPool}, {@code SHARED} mode, leak detection {@link
 *       LeakDetection#OFF} (the default, set explicitly here), unbounded, no drainer activity.
 *   <li>{@code hand-rolled}: {@link HandRolledRefPool}, a {@code ConcurrentHashMap} with an {@code
 *       AtomicInteger} count per object: the floor, with none of refpool's guarantees.
 *   <li>{@code commons-pool2}: {@code GenericKeyedObjectPool} borrow and return. It lends each
 *       borrower an instance of its own (up to 8 per key) instead of sharing one object; its
 *       "create and dispose" keeps no idle instance ({@code maxIdlePerKey} 0).
 *   <li>{@code stormpot}: Stormpot 3.2 claim and release through a thread-local tap, one pool (not
 *       keyed) of up to 8 objects, allocating inline; its "create and dispose" expires the object
 *       it claimed, so the next claim deallocates and allocates again.
 * </ul>
 *
 * <p>Targets, to be measured on a quiet machine with {@code -prof gc}: refpool's hot-key acquire
 * and close within 1.5&times; the hand-rolled map's time per operation, at least 10&times;
 * commons-pool2's throughput, and at most one small allocation per acquire (the handle, 32 bytes
 * with compressed oops: {@code gc.alloc.rate.norm} &le; 32 B/op).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class PoolBenchmark {
    private static final String HOT = "hot";
    private static final String IDLE = "idle";
    private static final int FRESH_KEYS = 1024;
    private static final Integer[] FRESH = new Integer[FRESH_KEYS];

    static {
        for (int i = 0; i < FRESH_KEYS; i++) {
            FRESH[i] = i;
        }
    }

    /** The pools of the hot-key, revive and create-dispose rows. */
    @State(Scope.Benchmark)
    public static class Pools {
        /** The pool implementation measured. */
        @Param({"refpool", "hand-rolled", "commons-pool2", "stormpot"})
        public String impl;

        private Subject subject;

        @Setup(Level.Trial)
        public void createPools() throws Exception {
            subject = switch (impl) {
                case "refpool" -> new RefPoolSubject();
                case "hand-rolled" -> new HandRolledSubject();
                case "commons-pool2" -> new CommonsPoolSubject();
                case "stormpot" -> new StormpotSubject();
                default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
            };
        }

        @TearDown(Level.Trial)
        public void closePools() throws Exception {
            subject.shutdown();
        }
    }

    /** A benchmark thread's hold on the subject: an attachment, a thread-local tap, a key cursor. */
    @State(Scope.Thread)
    public static class PerThread {
        SubjectThread thread;

        @Setup(Level.Iteration)
        public void enter(Pools pools) {
            thread = pools.subject.enter();
        }

        @TearDown(Level.Iteration)
        public void leave() {
            thread.leave();
        }
    }

    @Benchmark
    @Scales
    public Object hotKeyAcquireClose(PerThread perThread) throws Exception {
        return perThread.thread.hotKey();
    }

    @Benchmark
    public Object idleRevive(PerThread perThread) throws Exception {
        return perThread.thread.idleRevive();
    }

    @Benchmark
    public Object createDispose(PerThread perThread) throws Exception {
        return perThread.thread.createDispose();
    }

    // ------------------------------------------------------------------ churn

    /**
     * A bounded host under Zipf load for {@link #churnRequest}: {@value #CHURN_TENANTS} tenants,
     * room for {@code bound} objects, every request waiting for capacity if it must.
     */
    @State(Scope.Benchmark)
    public static class ChurnHost {
        static final int CHURN_TENANTS = 64;
        static final String[] NAMES = new String[CHURN_TENANTS];

        static {
            for (int i = 0; i < CHURN_TENANTS; i++) {
                NAMES[i] = "tenant-" + i;
            }
        }

        /** refpool ({@code acquireAsync}, SHARED) or commons-pool2 ({@code borrowObject}), same bound. */
        @Param({"refpool", "commons-pool2"})
        public String impl;

        /**
         * The bound on objects, live plus idle, in both pools: 2, as many as the threads at 2
         * threads (requests wait for each other's objects), or 8 (the idle policy decides).
         */
        @Param({"2", "8"})
        public int bound;

        RefPool<String, Resource> refpool;
        GenericKeyedObjectPool<String, Resource> commons;

        @Setup(Level.Trial)
        public void open() {
            if (impl.equals("refpool")) {
                refpool = RefPool.<String, Resource>builder(key -> ChurnCounters.created(key))
                        .attachMode(AttachMode.SHARED)
                        .maxObjects(bound)
                        .idle(cache -> cache.maximumSize(bound))
                        .build();
            } else if (impl.equals("commons-pool2")) {
                GenericKeyedObjectPoolConfig<Resource> config = new GenericKeyedObjectPoolConfig<>();
                config.setMaxTotal(bound);
                config.setMaxTotalPerKey(bound);
                config.setMaxIdlePerKey(bound);
                config.setJmxEnabled(false);
                commons = new GenericKeyedObjectPool<>(new CommonsFactory<>(ChurnCounters::created), config);
            } else {
                throw new IllegalArgumentException("unknown impl '" + impl + "'");
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            if (refpool != null) {
                refpool.close();
            }
            if (commons != null) {
                commons.close();
            }
            ChurnCounters.checkNoStrayCreation();
        }
    }

    /**
     * One benchmark thread's requests and creations, reported by JMH as the secondary results
     * {@code requests} and {@code creations}; the runner shows their ratio as creations per 1,000
     * requests. A creation counts on the thread that ran the factory (the requester, or the thread
     * whose release granted a waiting requester capacity: both are benchmark threads).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class ChurnCounters {
        private static final ThreadLocal<ChurnCounters> OF_THREAD = new ThreadLocal<>();
        private static final AtomicLong STRAY = new AtomicLong();
        private static final int DRAWS = 1 << 14;

        public long requests;
        public long creations;

        private int[] draws;
        private int cursor;

        @Setup(Level.Trial)
        public void register() {
            OF_THREAD.set(this);
            draws = ZipfDraws.draw(
                    ChurnHost.CHURN_TENANTS, DRAWS, Thread.currentThread().getId());
        }

        @Setup(Level.Iteration)
        public void reset() {
            requests = 0;
            creations = 0;
        }

        String next() {
            requests++;
            return ChurnHost.NAMES[draws[cursor++ & (DRAWS - 1)]];
        }

        static Resource created(String key) {
            ChurnCounters counters = OF_THREAD.get();
            if (counters == null) {
                STRAY.incrementAndGet();
            } else {
                counters.creations++;
            }
            return new Resource(key);
        }

        static void checkNoStrayCreation() {
            long stray = STRAY.getAndSet(0);
            if (stray != 0) {
                throw new IllegalStateException(stray + " creations ran on threads that are not benchmark threads:"
                        + " the creations per 1,000 requests would be short");
            }
        }
    }

    /**
     * One request of a host whose tenants outnumber its capacity: Zipf-drawn tenant, wait for its
     * object, use it ({@code consumeCPU(200)}), give it back. The score is requests per second; the
     * row's point is the creations per 1,000 requests beside it.
     */
    @Benchmark
    @Scales
    @SuppressWarnings("try")
    public Object churnRequest(ChurnHost host, ChurnCounters counters) throws Exception {
        String tenant = counters.next();
        if (host.refpool != null) {
            Handle<Resource> handle = host.refpool
                    .acquireAsync(tenant, CancellationToken.none())
                    .toCompletableFuture()
                    .join();
            Object used = handle.get().key;
            Blackhole.consumeCPU(200);
            try (Attachment attached = host.refpool.attach()) {
                handle.close();
            }
            return used;
        }
        Resource resource = host.commons.borrowObject(tenant);
        try {
            Blackhole.consumeCPU(200);
            return resource.key;
        } finally {
            host.commons.returnObject(tenant, resource);
        }
    }

    /** What is measured, behind one interface so each trial's call sites stay monomorphic. */
    interface Subject {
        SubjectThread enter();

        void shutdown() throws Exception;
    }

    /** One benchmark thread's operations on a subject. */
    interface SubjectThread {
        Object hotKey() throws Exception;

        Object idleRevive() throws Exception;

        Object createDispose() throws Exception;

        void leave();
    }

    /** The engine object every pool hands out. */
    static final class Resource {
        final Object key;

        Resource(Object key) {
            this.key = key;
        }
    }

    // ------------------------------------------------------------------ refpool

    @SuppressWarnings("try") // attachments scope the calls inside them without being referenced
    static final class RefPoolSubject implements Subject {
        final RefPool<String, Resource> hot = build();
        final RefPool<String, Resource> idle = RefPool.<String, Resource>builder(Resource::new)
                .attachMode(AttachMode.SHARED)
                .leakDetection(LeakDetection.OFF)
                .idle(cache -> cache.maximumSize(16))
                .build();
        final RefPool<Integer, Resource> fresh = RefPool.<Integer, Resource>builder(Resource::new)
                .attachMode(AttachMode.SHARED)
                .leakDetection(LeakDetection.OFF)
                .build();
        final Handle<Resource> keeper;

        RefPoolSubject() {
            try (Attachment attached = hot.attach()) {
                keeper = hot.acquire(HOT); // keeps the hot key's object live
            }
            try (Attachment attached = idle.attach()) {
                idle.acquire(IDLE).close(); // the idle key's object waits in the idle cache
            }
        }

        private static RefPool<String, Resource> build() {
            return RefPool.<String, Resource>builder(Resource::new)
                    .attachMode(AttachMode.SHARED)
                    .leakDetection(LeakDetection.OFF)
                    .build();
        }

        @Override
        public SubjectThread enter() {
            Attachment hotScope = hot.attach();
            Attachment idleScope = idle.attach();
            Attachment freshScope = fresh.attach();
            return new SubjectThread() {
                private int cursor;

                @Override
                public Object hotKey() {
                    try (Handle<Resource> handle = hot.acquire(HOT)) {
                        return handle.get();
                    }
                }

                @Override
                public Object idleRevive() {
                    try (Handle<Resource> handle = idle.acquire(IDLE)) {
                        return handle.get();
                    }
                }

                @Override
                public Object createDispose() {
                    try (Handle<Resource> handle = fresh.acquire(FRESH[cursor++ & (FRESH_KEYS - 1)])) {
                        return handle.get();
                    }
                }

                @Override
                public void leave() {
                    freshScope.close();
                    idleScope.close();
                    hotScope.close();
                }
            };
        }

        @Override
        public void shutdown() {
            try (Attachment attached = hot.attach()) {
                keeper.close();
            }
            hot.close();
            idle.close();
            fresh.close();
        }
    }

    // ------------------------------------------------------------------ hand-rolled

    static final class HandRolledSubject implements Subject {
        final HandRolledRefPool<String, Resource> hot = new HandRolledRefPool<>(Resource::new, r -> {}, false);
        final HandRolledRefPool<String, Resource> idle = new HandRolledRefPool<>(Resource::new, r -> {}, true);
        final HandRolledRefPool<Integer, Resource> fresh = new HandRolledRefPool<>(Resource::new, r -> {}, false);
        final HandRolledRefPool.Lease<String, Resource> keeper = hot.acquire(HOT);

        HandRolledSubject() {
            idle.acquire(IDLE).close();
        }

        @Override
        public SubjectThread enter() {
            return new SubjectThread() {
                private int cursor;

                @Override
                public Object hotKey() {
                    try (HandRolledRefPool.Lease<String, Resource> lease = hot.acquire(HOT)) {
                        return lease.get();
                    }
                }

                @Override
                public Object idleRevive() {
                    try (HandRolledRefPool.Lease<String, Resource> lease = idle.acquire(IDLE)) {
                        return lease.get();
                    }
                }

                @Override
                public Object createDispose() {
                    try (HandRolledRefPool.Lease<Integer, Resource> lease =
                            fresh.acquire(FRESH[cursor++ & (FRESH_KEYS - 1)])) {
                        return lease.get();
                    }
                }

                @Override
                public void leave() {}
            };
        }

        @Override
        public void shutdown() {
            keeper.close();
        }
    }

    // ------------------------------------------------------------------ commons-pool2

    static final class CommonsPoolSubject implements Subject {
        final GenericKeyedObjectPool<Object, Resource> pooled =
                new GenericKeyedObjectPool<>(new CommonsFactory<>(Resource::new), config(8));
        final GenericKeyedObjectPool<Object, Resource> fresh =
                new GenericKeyedObjectPool<>(new CommonsFactory<>(Resource::new), config(0));

        CommonsPoolSubject() throws Exception {
            pooled.addObject(HOT);
            pooled.addObject(IDLE);
        }

        private static GenericKeyedObjectPoolConfig<Resource> config(int maxIdlePerKey) {
            GenericKeyedObjectPoolConfig<Resource> config = new GenericKeyedObjectPoolConfig<>();
            config.setMaxTotalPerKey(8);
            config.setMaxIdlePerKey(maxIdlePerKey);
            config.setJmxEnabled(false);
            return config;
        }

        @Override
        public SubjectThread enter() {
            return new SubjectThread() {
                private int cursor;

                @Override
                public Object hotKey() throws Exception {
                    Resource resource = pooled.borrowObject(HOT);
                    pooled.returnObject(HOT, resource);
                    return resource;
                }

                @Override
                public Object idleRevive() throws Exception {
                    Resource resource = pooled.borrowObject(IDLE);
                    pooled.returnObject(IDLE, resource);
                    return resource;
                }

                @Override
                public Object createDispose() throws Exception {
                    Integer key = FRESH[cursor++ & (FRESH_KEYS - 1)];
                    Resource resource = fresh.borrowObject(key);
                    fresh.returnObject(key, resource); // no idle instance kept: destroyed
                    return resource;
                }

                @Override
                public void leave() {}
            };
        }

        @Override
        public void shutdown() {
            pooled.close();
            fresh.close();
        }
    }

    // ------------------------------------------------------------------ stormpot

    static final class StormpotSubject implements Subject {
        private static final Timeout WAIT = new Timeout(10, TimeUnit.SECONDS);

        final Pool<Pooled<Resource>> pooled =
                Pool.fromInline(new ResourceAllocator()).setSize(8).build();
        final Pool<Pooled<Resource>> fresh =
                Pool.fromInline(new ResourceAllocator()).setSize(1).build();

        @Override
        public SubjectThread enter() {
            PoolTap<Pooled<Resource>> pooledTap = pooled.getThreadLocalTap();
            PoolTap<Pooled<Resource>> freshTap = fresh.getThreadLocalTap();
            return new SubjectThread() {
                @Override
                public Object hotKey() throws Exception {
                    Pooled<Resource> claimed = pooledTap.claim(WAIT);
                    claimed.release();
                    return claimed.object;
                }

                @Override
                public Object idleRevive() throws Exception {
                    return hotKey(); // every pooled object idles between claims
                }

                @Override
                public Object createDispose() throws Exception {
                    Pooled<Resource> claimed = freshTap.claim(WAIT);
                    claimed.expire(); // the next claim deallocates it and allocates anew
                    claimed.release();
                    return claimed.object;
                }

                @Override
                public void leave() {}
            };
        }

        @Override
        public void shutdown() throws InterruptedException {
            pooled.shutdown().await(WAIT);
            fresh.shutdown().await(WAIT);
        }

        static final class ResourceAllocator implements Allocator<Pooled<Resource>> {
            @Override
            public Pooled<Resource> allocate(Slot slot) {
                return new Pooled<>(slot, new Resource(slot));
            }

            @Override
            public void deallocate(Pooled<Resource> poolable) {}
        }
    }
}
