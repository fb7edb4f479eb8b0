package io.refpool.bench;

import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.RefPool;
import io.refpool.sync.Guard;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
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

/**
 * A plugin host's request on per-tenant engines that are not thread-safe: pick one of four tenants
 * at random, run a short computation on its engine with nobody else inside it, give it back.
 *
 * <pre>
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main TenantBenchmark -t 2 -prof gc
 * </pre>
 *
 * <p>The implementations, each correct for a non-thread-safe engine:
 *
 * <ul>
 *   <li>{@code refpool}: {@link AttachMode#PER_OBJECT}, {@code pool.call(tenant, fn)}: the gate is
 *       shared and each engine has its own section, so different tenants run in parallel.
 *   <li>{@code refpool-leased}: the same with thread leases ({@code threadLeases}): a thread's
 *       call borrows from its own lease on the engine instead of writing the engine's count.
 *   <li>{@code sections}: {@link AttachMode#PER_OBJECT} used by hand: attach, acquire, take the
 *       engine's section with {@link Handle#section()}, use {@link Handle#get()}, release all.
 *       With strict access its {@code get()} checks the attachment and the section, which {@code
 *       pool.call} never needs to.
 *   <li>{@code exclusive}: {@link AttachMode#GLOBAL}, {@code pool.call(tenant, fn)}: one thread
 *       attached at a time, like a global interpreter lock, so tenants run one after another.
 *   <li>{@code lock-map}: what a host wrote by hand before {@code PER_OBJECT}: a {@link
 *       AttachMode#SHARED} pool and a {@code ConcurrentHashMap} of one {@link ReentrantLock} per
 *       tenant, taken around the work. Its locks are not fair: a thread that releases a lock and
 *       asks again may take it before a thread that was waiting.
 *   <li>{@code fair-lock-map}: the same with fair {@code ReentrantLock}s, first come first served
 *       like refpool's sections, so the two rows side by side show what strict FIFO costs.
 *   <li>{@code lock-table}, {@code fair-lock-table}: no pool at all: the four engines and a table of
 *       one {@code ReentrantLock} each (unfair, fair), indexed by tenant; the floor a host reaches
 *       with engines it never unloads.
 * </ul>
 *
 * <p>Every tenant stays loaded: the host holds a handle to each engine for the whole trial, as a
 * host does for the tenants it serves, so the rows measure how requests share the engines and not
 * how an idle engine is revived ({@code PoolBenchmark.idleRevive} measures that).
 *
 * <p>{@link #request} is the request; {@link #strictRequest} is the same with {@code
 * strictAccess(true)}, whose {@code Handle.get()} checks the attachment and (in {@code PER_OBJECT}
 * mode) the section: the two rows side by side are what strict access costs. Only {@code sections}
 * and the lock maps call {@code get()}; {@code pool.call} hands the function the object and checks
 * nothing, so its two rows differ by noise alone.
 *
 * <p>Target, on a 2-core machine: {@code refpool} at least as fast as {@code lock-map} at 1 and 2
 * threads, and faster than {@code exclusive} at 2 threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class TenantBenchmark {
    static final List<String> TENANTS = List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3");

    /** How the tenants' engines are shared. */
    @Param({
        "refpool",
        "refpool-leased",
        "sections",
        "exclusive",
        "lock-map",
        "fair-lock-map",
        "lock-table",
        "fair-lock-table"
    })
    public String impl;

    private Host host;
    private Host strictHost;

    /** A tenant's engine: a little state that only one thread at a time may touch. */
    static final class Engine {
        private long state;

        Engine(String tenant) {
            this.state = tenant.hashCode();
        }

        /** About a hundred nanoseconds of dependent arithmetic on the engine's state. */
        long work() {
            long s = state;
            for (int i = 0; i < 32; i++) {
                s = s * 6364136223846793005L + 1442695040888963407L;
            }
            state = s;
            return s;
        }
    }

    /** One way of running a request on a tenant's engine, on a pool that keeps every tenant loaded. */
    abstract static class Host {
        final RefPool<String, Engine> pool;
        /** A handle to every tenant's engine, which keeps the tenants loaded. */
        private final List<Handle<Engine>> loaded;

        Host(RefPool<String, Engine> pool) {
            this.pool = pool;
            this.loaded =
                    pool.attached(() -> TENANTS.stream().map(pool::acquire).toList());
        }

        abstract long request(String tenant);

        final void close() {
            pool.attached(() -> {
                loaded.forEach(Handle::close);
                return null;
            });
            pool.close();
        }
    }

    /** A host that attaches and acquires by hand, then makes the engine its own in its own way. */
    abstract static class HandleHost extends Host {
        HandleHost(RefPool<String, Engine> pool) {
            super(pool);
        }

        @Override
        final long request(String tenant) {
            Attachment attachment = pool.attach();
            try {
                Handle<Engine> handle = pool.acquire(tenant);
                try {
                    return workAlone(tenant, handle);
                } finally {
                    handle.close();
                }
            } finally {
                attachment.close();
            }
        }

        /** Runs the engine's work with nobody else inside it. */
        abstract long workAlone(String tenant, Handle<Engine> handle);
    }

    @Setup(Level.Trial)
    public void createHosts() {
        host = host(impl, false);
        strictHost = host(impl, true);
    }

    @TearDown(Level.Trial)
    public void closeHosts() {
        host.close();
        strictHost.close();
    }

    static Host host(String impl, boolean strict) {
        return switch (impl) {
            case "refpool" -> new CallHost(pool(AttachMode.PER_OBJECT, strict));
            case "refpool-leased" -> new CallHost(leasedPool(strict));
            case "sections" -> new SectionHost(pool(AttachMode.PER_OBJECT, strict));
            case "exclusive" -> new CallHost(pool(AttachMode.GLOBAL, strict));
            case "lock-map" -> new LockMapHost(pool(AttachMode.SHARED, strict), false);
            case "fair-lock-map" -> new LockMapHost(pool(AttachMode.SHARED, strict), true);
            case "lock-table" -> new LockTableHost(pool(AttachMode.SHARED, strict), false);
            case "fair-lock-table" -> new LockTableHost(pool(AttachMode.SHARED, strict), true);
            default -> throw new IllegalArgumentException("unknown impl '" + impl + "'");
        };
    }

    private static RefPool<String, Engine> pool(AttachMode mode, boolean strict) {
        return RefPool.builder(Engine::new)
                .attachMode(mode)
                .strictAccess(strict)
                .idle(cache -> cache.maximumSize(TENANTS.size()))
                .build();
    }

    /** {@code refpool}'s pool with thread leases: a thread's calls write no count another core writes. */
    private static RefPool<String, Engine> leasedPool(boolean strict) {
        return RefPool.builder(Engine::new)
                .attachMode(AttachMode.PER_OBJECT)
                .strictAccess(strict)
                .idle(cache -> cache.maximumSize(TENANTS.size()))
                .threadLeases(Duration.ofSeconds(1))
                .build();
    }

    /** Each thread picks tenants at random, so two threads share one a quarter of the time. */
    @State(Scope.Thread)
    public static class Picker {
        private final SplittableRandom random = new SplittableRandom();

        String next() {
            return TENANTS.get(random.nextInt(TENANTS.size()));
        }
    }

    @Benchmark
    @Scales
    public long request(Picker picker) {
        return host.request(picker.next());
    }

    @Benchmark
    @Scales
    public long strictRequest(Picker picker) {
        return strictHost.request(picker.next());
    }

    /** {@code pool.call}: the pool takes whatever the mode needs. */
    static final class CallHost extends Host {
        CallHost(RefPool<String, Engine> pool) {
            super(pool);
        }

        @Override
        long request(String tenant) {
            return pool.call(tenant, Engine::work);
        }
    }

    /** {@code PER_OBJECT} through a handle and its section, as code that keeps a handle would use it. */
    static final class SectionHost extends HandleHost {
        SectionHost(RefPool<String, Engine> pool) {
            super(pool);
        }

        @Override
        long workAlone(String tenant, Handle<Engine> handle) {
            Guard section = handle.section();
            try {
                return handle.get().work();
            } finally {
                section.close();
            }
        }
    }

    /** The hand-written host: a shared pool plus one lock per tenant. */
    static final class LockMapHost extends HandleHost {
        private final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();
        private final boolean fair;

        LockMapHost(RefPool<String, Engine> pool, boolean fair) {
            super(pool);
            this.fair = fair;
        }

        @Override
        long workAlone(String tenant, Handle<Engine> handle) {
            ReentrantLock lock = locks.get(tenant); // no capturing lambda on the hot path
            if (lock == null) {
                lock = locks.computeIfAbsent(tenant, t -> new ReentrantLock(fair));
            }
            lock.lock();
            try {
                return handle.get().work();
            } finally {
                lock.unlock();
            }
        }
    }

    /** The hand-written floor: the engines and one lock each, in arrays, with no pool in the request. */
    static final class LockTableHost extends Host {
        private final Engine[] engines = new Engine[TENANTS.size()];
        private final ReentrantLock[] locks = new ReentrantLock[TENANTS.size()];

        LockTableHost(RefPool<String, Engine> pool, boolean fair) {
            super(pool);
            for (int i = 0; i < engines.length; i++) {
                engines[i] = new Engine(TENANTS.get(i));
                locks[i] = new ReentrantLock(fair);
            }
        }

        @Override
        long request(String tenant) {
            int i = tenant.charAt(tenant.length() - 1) - '0'; // "tenant-N": the table's index
            ReentrantLock lock = locks[i];
            lock.lock();
            try {
                return engines[i].work();
            } finally {
                lock.unlock();
            }
        }
    }
}
