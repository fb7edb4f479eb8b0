package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.lib.jse.JsePlatform;

/**
 * A plugin host end to end, with a real engine that is not thread-safe: one LuaJ {@link Globals}
 * per tenant, lent to plugins through a {@link AttachMode#PER_OBJECT} pool with strict access.
 * Plugins run on platform threads and (on JDK 21+) virtual threads, share handles to worker threads
 * that close them there, wait for capacity (four tenants, three engines at most), and leak a handle;
 * idle engines expire. Every update must land (a {@code count = count + 1} in Lua is a
 * read-modify-write that two threads in one {@code Globals} lose), no two threads may be inside one
 * engine at once, different tenants must run in parallel, and every engine must be closed exactly
 * once, attached.
 */
class PluginHostExampleTest {
    private static final List<String> TENANTS = List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3");
    private static final Duration IDLE_EXPIRY = Duration.ofMinutes(5);

    /** A tenant's engine: a LuaJ {@code Globals} and what the test checks of how it was used. */
    static final class LuaEngine {
        final String tenant;
        private final Globals globals = JsePlatform.standardGlobals();
        private final LuaValue bump;
        /** Threads inside this engine right now; more than one is a violation. */
        private final AtomicInteger inside = new AtomicInteger();

        final AtomicInteger overlaps = new AtomicInteger();
        /** Updates run on this engine, counted outside Lua; Lua's own count must match it. */
        final AtomicInteger updates = new AtomicInteger();

        final AtomicInteger closes = new AtomicInteger();
        volatile boolean closedAttached;

        LuaEngine(String tenant) {
            this.tenant = tenant;
            globals.load("count = 0").call();
            this.bump = globals.load("local by = ...; local seen = count; count = seen + by; return count");
        }

        /** Runs the tenant's script once: Lua's {@code count} goes up by one. */
        int bump() {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            try {
                int after = bump.call(LuaValue.valueOf(1)).toint();
                updates.incrementAndGet();
                return after;
            } finally {
                inside.decrementAndGet();
            }
        }

        int luaCount() {
            return globals.get("count").toint();
        }
    }

    private final List<LuaEngine> engines = new CopyOnWriteArrayList<>();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final AtomicReference<RefPool<String, LuaEngine>> poolRef = new AtomicReference<>();
    private final ManualTicker ticker = new ManualTicker();

    private RefPool<String, LuaEngine> host() {
        RefPool<String, LuaEngine> pool = RefPool.builder((String tenant) -> {
                    LuaEngine engine = new LuaEngine(tenant);
                    engines.add(engine);
                    return engine;
                })
                .disposer(engine -> {
                    engine.closedAttached = poolRef.get().isAttached();
                    engine.closes.incrementAndGet();
                })
                .attachMode(AttachMode.PER_OBJECT)
                .strictAccess(true)
                .maxObjects(3)
                .idle(cache -> cache.maximumSize(2)
                        .expireAfterAccess(IDLE_EXPIRY)
                        .ticker(ticker)
                        .executor(Runnable::run))
                .leakDetection(LeakDetection.PARANOID)
                .errorListener(errors::add)
                .build();
        poolRef.set(pool);
        return pool;
    }

    @Test
    void aPluginHostServesTenantsToPluginsOnEveryKindOfThreadWithoutLosingAnUpdate() throws Throwable {
        RefPool<String, LuaEngine> pool = host();
        int expectedUpdates = 0;

        expectedUpdates += differentTenantsRunInParallel(pool);
        expectedUpdates += pluginsOn(pool, Executors.newFixedThreadPool(4), 8, 250);
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        if (virtualThreads != null) {
            expectedUpdates += pluginsOn(pool, virtualThreads, 200, 10);
        }
        expectedUpdates += handlesSharedToWorkersAreClosedThere(pool);
        expectedUpdates += aLeakedHandleIsFoundAndReleased(pool);
        idleEnginesExpire(pool);

        pool.close();
        assertEquals(
                List.of(),
                errors.stream()
                        .filter(e -> e.kind() != PoolError.Kind.HANDLE_LEAKED)
                        .toList());
        int updates = 0;
        for (LuaEngine engine : engines) {
            assertEquals(0, engine.overlaps.get(), engine.tenant + ": two threads were inside one engine");
            assertEquals(engine.updates.get(), engine.luaCount(), engine.tenant + ": an update was lost");
            assertEquals(1, engine.closes.get(), engine.tenant + ": closed exactly once");
            assertTrue(engine.closedAttached, engine.tenant + ": closed attached");
            updates += engine.updates.get();
        }
        assertEquals(expectedUpdates, updates, "every request ran once");
    }

    /** Two plugins, each inside its own tenant's engine, wait for each other there. */
    private static int differentTenantsRunInParallel(RefPool<String, LuaEngine> pool) throws Exception {
        CountDownLatch bothInside = new CountDownLatch(2);
        List<TestKit.Forked<Integer>> plugins = new ArrayList<>();
        for (String tenant : TENANTS.subList(0, 2)) {
            plugins.add(fork(
                    "plugin for " + tenant,
                    () -> pool.call(tenant, engine -> {
                        engine.bump();
                        bothInside.countDown();
                        // a pool that serialised tenants would never let the other plugin in
                        TestKeyedPoolFixtures.awaitLatch(bothInside);
                        return engine.bump();
                    })));
        }
        for (TestKit.Forked<Integer> plugin : plugins) {
            assertEquals(2, plugin.join());
        }
        return 4;
    }

    /**
     * {@code plugins} plugins on {@code threads}, each sending {@code requests} requests round the
     * tenants, through {@code callAsync} (it waits in line for capacity: four tenants, three
     * engines) and {@code call} for the tenant a request already has (nested calls share it).
     */
    private static int pluginsOn(RefPool<String, LuaEngine> pool, ExecutorService threads, int plugins, int requests)
            throws Exception {
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int p = 0; p < plugins; p++) {
            int plugin = p;
            done.add(CompletableFuture.runAsync(
                    () -> {
                        for (int r = 0; r < requests; r++) {
                            String tenant = TENANTS.get((plugin + r) % TENANTS.size());
                            pool.callAsync(tenant, CancellationToken.none(), LuaEngine::bump)
                                    .toCompletableFuture()
                                    .join();
                        }
                    },
                    threads));
        }
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        threads.shutdown();
        assertTrue(threads.awaitTermination(BOUND.toSeconds(), TimeUnit.SECONDS));
        return plugins * requests;
    }

    /** A plugin hands a copy of its handle to a worker, which uses it in the section and closes it there. */
    private static int handlesSharedToWorkersAreClosedThere(RefPool<String, LuaEngine> pool) throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(2);
        List<CompletableFuture<Void>> done = new ArrayList<>();
        pool.attached(() -> {
            try (Handle<LuaEngine> handle = pool.acquire("tenant-2")) {
                for (int i = 0; i < 20; i++) {
                    Handle<LuaEngine> copy = handle.share();
                    done.add(CompletableFuture.runAsync(
                            () -> {
                                pool.attached(() -> {
                                    try (Guard section = copy.section()) {
                                        return copy.get().bump();
                                    }
                                });
                                copy.close(); // off-attachment: a pending decrement
                            },
                            workers));
                }
            }
            return null;
        });
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        workers.shutdown();
        assertTrue(workers.awaitTermination(BOUND.toSeconds(), TimeUnit.SECONDS));
        pool.attached(() -> null); // applies the workers' closes
        assertEquals(0, pool.attached(() -> pool.stats().live()), "every copy's reference was given back");
        return 20;
    }

    /** A handle dropped unclosed is found by the leak detector, which releases its reference. */
    private static int aLeakedHandleIsFoundAndReleased(RefPool<String, LuaEngine> pool) {
        dropAHandle(pool);
        eventually().pollInterval(Duration.ofMillis(20)).until(() -> {
            System.gc();
            return pool.stats().leaks() == 1 && pool.attached(() -> pool.stats().live()) == 0;
        });
        return 1;
    }

    private static void dropAHandle(RefPool<String, LuaEngine> pool) {
        pool.attached(() -> {
            Handle<LuaEngine> dropped = pool.acquire("tenant-3");
            try (Guard section = dropped.section()) {
                return dropped.get().bump();
            }
        });
    }

    /**
     * Idle engines expire, and are closed attached: within two periods of their last idle (the idle
     * tier's slack: an engine used since the cache took it is put back once when its entry expires).
     */
    private void idleEnginesExpire(RefPool<String, LuaEngine> pool) {
        long idleBefore = pool.stats().idle();
        assertTrue(idleBefore > 0, "engines idle between requests");
        for (int period = 1; period <= 2; period++) {
            ticker.advance(IDLE_EXPIRY.plusSeconds(1));
            // a new tenant's put runs the cache's maintenance, which expires the others; the detach
            // disposes them (in production the pool's scheduler runs it; it reads real time, not
            // this test's ticker, and a revive and an idle write nothing to the cache)
            String probe = "tenant-probe-" + period;
            pool.attached(() -> {
                pool.acquire(probe).close();
                return null;
            });
        }
        assertTrue(pool.stats().evictions(EvictionCause.EXPIRED) > 0, "idle engines expired");
    }
}
