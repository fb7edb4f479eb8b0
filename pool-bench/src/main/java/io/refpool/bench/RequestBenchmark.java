package io.refpool.bench;

import io.refpool.bench.baseline.CommonsFactory;
import io.refpool.bench.baseline.HandRolledRefPool;
import io.refpool.bench.baseline.ThreadLeasedRefPool;
import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.RefPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericKeyedObjectPool;
import org.apache.commons.pool2.impl.GenericKeyedObjectPoolConfig;
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
import org.openjdk.jmh.infra.ThreadParams;
import stormpot.Allocator;
import stormpot.Pool;
import stormpot.PoolTap;
import stormpot.Pooled;
import stormpot.Slot;
import stormpot.Timeout;

/**
 * A plugin host's request, end to end: attach, take the tenant's object, use it, give it back,
 * detach. Each row sets refpool against what a host would use instead, in the same run.
 *
 * <pre>
 * java -jar pool-bench/target/pool-bench.jar request --threads 1,2
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main RequestBenchmark -t 2 -prof gc
 * </pre>
 *
 * <ul>
 *   <li>{@link #zipfRequest}: each request names one of {@value #TENANTS} tenants drawn from a Zipf
 *       distribution (exponent 1: the 16 most popular tenants get about 71% of the requests).
 *       With {@code idle=16} refpool's idle cache holds fewer objects than there are tenants, so
 *       the tail's requests create objects and the cache evicts and disposes others; with {@code
 *       idle=64} it holds every tenant, as Stormpot's pools and the hand-rolled map always do.
 *   <li>{@link #ownTenants}: the same Zipf requests, but each benchmark thread has tenants of its
 *       own (thread {@code i} of {@code n} draws among the tenants {@code i}, {@code i + n}, ...):
 *       no object is shared between threads, so the row shows what the pool itself writes that
 *       another core also writes, without the one shared count per tenant that {@code
 *       zipfRequest} has at 2 threads (its hot tenants are everyone's).
 *   <li>{@link #revive}: one tenant: every request revives the tenant's idle object (count 0 to
 *       1) and idles it again. It {@linkplain Scales scales}: at 2 threads both revive the one hot
 *       key at once, its count crossing zero over and over (Stormpot's tap gives each thread an
 *       object of its own).
 *   <li>{@link #randomLiveKey}: the thread stays attached; each operation takes and gives back the
 *       object of a random key among {@code keys} live ones (each held open by the host), so the
 *       lookups miss the CPU caches as a host with many sessions does.
 * </ul>
 *
 * <p>The implementations ({@code impl}):
 *
 * <ul>
 *   <li>{@code refpool}: {@code SHARED} mode; {@code attach()}, {@code acquire(key)}, {@code
 *       get()}, {@code close()} of both.
 *   <li>{@code refpool-call}: the same request in its closure form, {@code pool.call(key, fn)}.
 *   <li>{@code refpool-leased}, {@code refpool-call-leased}: the two with thread leases on
 *       ({@code threadLeases(1 s)}): a thread borrows from its own lease on each object it uses
 *       again, and writes no count another core writes.
 *   <li>{@code refpool-bounded}, {@code refpool-leased-bounded}: {@code refpool} and {@code
 *       refpool-leased} with {@code maxObjects(idle + 2)}, live plus idle, as commons-pool2's
 *       bound: with {@code idle=16} the tail's creations find no permit free, and with leases each
 *       such creation first ends the leases that lend nothing.
 *   <li>{@code stormpot}: a Stormpot pool per tenant (it has no keys), each of up to 2 objects,
 *       claimed and released through a thread-local tap. Every tenant's objects stay allocated: it
 *       has no bound across tenants.
 *   <li>{@code commons-pool2}: {@code GenericKeyedObjectPool}, borrow and return; {@code maxTotal}
 *       {@code idle} plus 2, so a tenant not in the pool destroys the oldest idle object
 *       of another, as refpool's bound does. It lends each borrower an object of its own.
 *   <li>{@code hand-rolled}: {@link HandRolledRefPool}, a {@code ConcurrentHashMap} and an {@code
 *       AtomicInteger} per object, objects kept at count zero with no bound: the floor, with none
 *       of refpool's guarantees (no attachment, no bound, disposal on the closing thread).
 *   <li>{@code thread-leased}: {@link ThreadLeasedRefPool}, the same map where each thread keeps
 *       a lease on every object it uses (up to 128) and counts its uses of a leased object in a
 *       word of its own: the steady state of thread leases, with nothing revoked and nothing
 *       disposed, and none of refpool's guarantees: the ceiling of {@code refpool-leased}.
 * </ul>
 *
 * <p>The runner reports bytes/op per fork next to the mean, so a fork whose JIT left the handle
 * unscalarised shows.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RequestBenchmark {
    static final int TENANTS = 64;
    private static final String[] NAMES = new String[TENANTS];

    static {
        for (int i = 0; i < TENANTS; i++) {
            NAMES[i] = "tenant-" + i;
        }
    }

    /** A tenant's engine: read only here, so sharing one costs no write to it. */
    static final class Engine {
        final String tenant;

        Engine(String tenant) {
            this.tenant = tenant;
        }

        Object use() {
            return tenant;
        }
    }

    /** One request on one tenant, whatever the implementation. */
    interface Host {
        /** {@return a view of the thread's own taps, made on that thread} */
        Host forThread();

        /** {@return what the request read from tenant {@code tenant}'s engine} */
        Object request(int tenant) throws Exception;

        void close() throws Exception;
    }

    static Host host(String impl, int idle) {
        return switch (impl) {
            case "refpool" -> new RefPoolHost(false, false, idle, false);
            case "refpool-call" -> new RefPoolHost(true, false, idle, false);
            case "refpool-leased" -> new RefPoolHost(false, true, idle, false);
            case "refpool-call-leased" -> new RefPoolHost(true, true, idle, false);
            case "refpool-bounded" -> new RefPoolHost(false, false, idle, true);
            case "refpool-leased-bounded" -> new RefPoolHost(false, true, idle, true);
            case "stormpot" -> new StormpotHost(null);
            case "commons-pool2" -> new CommonsHost(idle);
            case "hand-rolled" -> new HandRolledHost();
            case "thread-leased" -> new ThreadLeasedHost();
            default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
        };
    }

    /** The tenants' host for {@link #zipfRequest} and {@link #revive}. */
    @State(Scope.Benchmark)
    public static class Hosts {
        @Param({
            "refpool",
            "refpool-call",
            "refpool-leased",
            "refpool-call-leased",
            "refpool-bounded",
            "refpool-leased-bounded",
            "stormpot",
            "commons-pool2",
            "hand-rolled",
            "thread-leased"
        })
        public String impl;

        /**
         * How many idle objects refpool's cache keeps (commons-pool2: its total bound, plus 2):
         * fewer than the tenants (the tail churns: creations, evictions, disposals), or all of them.
         */
        @Param({"16", "64"})
        public int idle;

        Host host;

        @Setup(Level.Trial)
        public void open() {
            host = host(impl, idle);
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            host.close();
        }
    }

    /** A benchmark thread's view of the host and its pre-drawn tenants. */
    @State(Scope.Thread)
    public static class Requester {
        private static final int DRAWS = 1 << 14;
        private int[] draws;
        private int[] ownDraws;
        private int cursor;
        Host host;

        @Setup(Level.Trial)
        public void draw(Hosts hosts, ThreadParams threads) {
            host = hosts.host.forThread();
            draws = ZipfDraws.draw(TENANTS, DRAWS, Thread.currentThread().getId());
            int count = threads.getThreadCount();
            int index = threads.getThreadIndex();
            ownDraws = ZipfDraws.draw(
                    TENANTS / count, DRAWS, Thread.currentThread().getId());
            for (int i = 0; i < DRAWS; i++) {
                ownDraws[i] = ownDraws[i] * count + index;
            }
        }

        int nextOwn() {
            return ownDraws[cursor++ & (DRAWS - 1)];
        }

        int next() {
            return draws[cursor++ & (DRAWS - 1)];
        }
    }

    @Benchmark
    @Scales
    public Object zipfRequest(Requester requester) throws Exception {
        return requester.host.request(requester.next());
    }

    @Benchmark
    @Scales
    public Object ownTenants(Requester requester) throws Exception {
        return requester.host.request(requester.nextOwn());
    }

    @Benchmark
    @Scales
    public Object revive(Requester requester) throws Exception {
        return requester.host.request(0);
    }

    // ------------------------------------------------------------------ refpool

    @SuppressWarnings("try") // the attachment scopes the acquire without being referenced
    static final class RefPoolHost implements Host {
        private final RefPool<String, Engine> pool;
        private final boolean closure;

        RefPoolHost(boolean closure, boolean leased, int idle, boolean bounded) {
            this.closure = closure;
            RefPool.Builder<String, Engine> builder =
                    RefPool.builder(Engine::new).attachMode(AttachMode.SHARED).idle(cache -> cache.maximumSize(idle));
            if (leased) {
                builder.threadLeases(Duration.ofSeconds(1));
            }
            if (bounded) {
                builder.maxObjects(idle + 2); // as commons-pool2's maxTotal: live plus idle
            }
            this.pool = builder.build();
        }

        @Override
        public Host forThread() {
            return this;
        }

        @Override
        public Object request(int tenant) {
            if (closure) {
                return pool.call(NAMES[tenant], Engine::use);
            }
            try (Attachment attached = pool.attach();
                    Handle<Engine> engine = pool.acquire(NAMES[tenant])) {
                return engine.get().use();
            }
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    // ------------------------------------------------------------------ stormpot

    static final class StormpotHost implements Host {
        private static final Timeout WAIT = new Timeout(10, TimeUnit.SECONDS);

        private final List<Pool<Pooled<Engine>>> pools;
        private final PoolTap<Pooled<Engine>>[] taps;

        @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type
        StormpotHost(List<Pool<Pooled<Engine>>> shared) {
            if (shared == null) {
                pools = new ArrayList<>();
                for (String name : NAMES) {
                    pools.add(Pool.fromInline(new EngineAllocator(name))
                            .setSize(2)
                            .build());
                }
                taps = null;
            } else {
                pools = shared;
                taps = new PoolTap[TENANTS];
                for (int i = 0; i < TENANTS; i++) {
                    taps[i] = shared.get(i).getThreadLocalTap();
                }
            }
        }

        @Override
        public Host forThread() {
            return new StormpotHost(pools);
        }

        @Override
        public Object request(int tenant) throws Exception {
            Pooled<Engine> claimed = taps[tenant].claim(WAIT);
            try {
                return claimed.object.use();
            } finally {
                claimed.release();
            }
        }

        @Override
        public void close() throws InterruptedException {
            for (Pool<Pooled<Engine>> pool : pools) {
                pool.shutdown().await(WAIT);
            }
        }

        static final class EngineAllocator implements Allocator<Pooled<Engine>> {
            private final String tenant;

            EngineAllocator(String tenant) {
                this.tenant = tenant;
            }

            @Override
            public Pooled<Engine> allocate(Slot slot) {
                return new Pooled<>(slot, new Engine(tenant));
            }

            @Override
            public void deallocate(Pooled<Engine> poolable) {}
        }
    }

    // ------------------------------------------------------------------ commons-pool2

    static final class CommonsHost implements Host {
        private final GenericKeyedObjectPool<String, Engine> pool;

        CommonsHost(int idle) {
            GenericKeyedObjectPoolConfig<Engine> config = new GenericKeyedObjectPoolConfig<>();
            config.setMaxTotalPerKey(2);
            config.setMaxIdlePerKey(2);
            config.setMaxTotal(idle + 2);
            config.setJmxEnabled(false);
            pool = new GenericKeyedObjectPool<>(new CommonsFactory<>(Engine::new), config);
        }

        @Override
        public Host forThread() {
            return this;
        }

        @Override
        public Object request(int tenant) throws Exception {
            String name = NAMES[tenant];
            Engine engine = pool.borrowObject(name);
            try {
                return engine.use();
            } finally {
                pool.returnObject(name, engine);
            }
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    // ------------------------------------------------------------------ hand-rolled

    static final class HandRolledHost implements Host {
        private final HandRolledRefPool<String, Engine> pool = new HandRolledRefPool<>(Engine::new, e -> {}, true);

        @Override
        public Host forThread() {
            return this;
        }

        @Override
        public Object request(int tenant) {
            try (HandRolledRefPool.Lease<String, Engine> engine = pool.acquire(NAMES[tenant])) {
                return engine.get().use();
            }
        }

        @Override
        public void close() {}
    }

    // ------------------------------------------------------------------ thread leases, a cost model

    static final class ThreadLeasedHost implements Host {
        private final ThreadLeasedRefPool<String, Engine> pool = new ThreadLeasedRefPool<>(Engine::new);

        @Override
        public Host forThread() {
            return this;
        }

        @Override
        public Object request(int tenant) {
            try (ThreadLeasedRefPool.Use<Engine> engine = pool.acquire(NAMES[tenant])) {
                return engine.get().use();
            }
        }

        @Override
        public void close() {}
    }

    // ------------------------------------------------------------------ a random live key

    /** {@code keys} live objects, each held open by the host, in refpool or the hand-rolled map. */
    @State(Scope.Benchmark)
    public static class LiveKeys {
        @Param({"refpool", "hand-rolled"})
        public String impl;

        @Param({"1000", "1000000"})
        public int keys;

        Integer[] names;
        RefPool<Integer, Engine> pool;
        HandRolledRefPool<Integer, Engine> map;
        private final List<AutoCloseable> keepers = new ArrayList<>();

        @Setup(Level.Trial)
        public void open() {
            names = new Integer[keys];
            for (int i = 0; i < keys; i++) {
                names[i] = i;
            }
            switch (impl) {
                case "refpool":
                    pool = RefPool.builder((Integer key) -> new Engine("k"))
                            .attachMode(AttachMode.SHARED)
                            .build();
                    pool.attached(() -> {
                        for (Integer name : names) {
                            keepers.add(pool.acquire(name));
                        }
                        return null;
                    });
                    break;
                case "hand-rolled":
                    map = new HandRolledRefPool<>(key -> new Engine("k"), e -> {}, false);
                    for (Integer name : names) {
                        keepers.add(map.acquire(name));
                    }
                    break;
                default:
                    throw new IllegalArgumentException("unknown impl '" + impl + "'");
            }
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            if (pool != null) {
                pool.attached(() -> {
                    keepers.forEach(k -> ((Handle<?>) k).close());
                    return null;
                });
                pool.close();
            } else {
                for (AutoCloseable keeper : keepers) {
                    keeper.close();
                }
            }
            keepers.clear();
        }
    }

    /** A benchmark thread's attachment (refpool) and pre-drawn random keys. */
    @State(Scope.Thread)
    public static class RandomKeys {
        private static final int DRAWS = 1 << 14;
        private final int[] draws = new int[DRAWS];
        private int cursor;
        private Attachment attached;

        @Setup(Level.Trial)
        public void draw(LiveKeys live) {
            SplittableRandom random =
                    new SplittableRandom(Thread.currentThread().getId());
            for (int i = 0; i < DRAWS; i++) {
                draws[i] = random.nextInt(live.keys);
            }
        }

        @Setup(Level.Iteration)
        public void attach(LiveKeys live) {
            if (live.pool != null) {
                attached = live.pool.attach();
            }
        }

        @TearDown(Level.Iteration)
        public void detach() {
            if (attached != null) {
                attached.close();
                attached = null;
            }
        }

        int next() {
            return draws[cursor++ & (DRAWS - 1)];
        }
    }

    @Benchmark
    @Scales
    public Object randomLiveKey(LiveKeys live, RandomKeys keys) {
        Integer key = live.names[keys.next()];
        RefPool<Integer, Engine> pool = live.pool;
        if (pool != null) {
            try (Handle<Engine> engine = pool.acquire(key)) {
                return engine.get().use();
            }
        }
        try (HandRolledRefPool.Lease<Integer, Engine> engine = live.map.acquire(key)) {
            return engine.get().use();
        }
    }
}
