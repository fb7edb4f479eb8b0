package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.refpool.sync.CancellationToken;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link RefPoolMetrics}: every meter reads what {@link RefPool#stats()} says once the pool is
 * quiet, tagged with the pool's name; and pool-core runs without Micrometer present.
 */
class RefPoolMetricsTest {
    private static double gauge(MeterRegistry registry, String name, String... tags) {
        Gauge gauge = registry.find(name).tags(tags).gauge();
        assertNotNull(gauge, name + " " + List.of(tags));
        return gauge.value();
    }

    private static double counter(MeterRegistry registry, String name, String... tags) {
        FunctionCounter counter = registry.find(name).tags(tags).functionCounter();
        assertNotNull(counter, name + " " + List.of(tags));
        return counter.count();
    }

    private static void assertMetersMatchStats(MeterRegistry registry, RefPool<String, StringBuilder> pool) {
        PoolStats stats = pool.stats();
        assertEquals(stats.live(), gauge(registry, "refpool.objects", "pool", "tenants", "state", "live"), "live");
        assertEquals(stats.idle(), gauge(registry, "refpool.objects", "pool", "tenants", "state", "idle"), "idle");
        assertEquals(stats.pendingDecrements(), gauge(registry, "refpool.pending.releases", "pool", "tenants"));
        assertEquals(stats.capacityWaiters(), gauge(registry, "refpool.capacity.waiters", "pool", "tenants"));
        assertEquals(stats.creations(), counter(registry, "refpool.creations", "pool", "tenants"));
        assertEquals(stats.idleHits(), counter(registry, "refpool.idle.hits", "pool", "tenants"));
        assertEquals(stats.drains(), counter(registry, "refpool.drains", "pool", "tenants"));
        assertEquals(stats.leaks(), counter(registry, "refpool.leaks", "pool", "tenants"));
        assertEquals(stats.timeouts(), counter(registry, "refpool.timeouts", "pool", "tenants"));
        assertEquals(stats.heldTooLong(), counter(registry, "refpool.held.too.long", "pool", "tenants"));
        for (DisposalCause cause : DisposalCause.values()) {
            assertEquals(
                    stats.disposals(cause),
                    counter(registry, "refpool.disposals", "pool", "tenants", "cause", cause.name()),
                    "disposals for " + cause);
        }
    }

    @Test
    void aSimpleMeterRegistryReadsWhatStatsSays() throws Exception {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .name("tenants")
                .attachMode(AttachMode.SHARED)
                .maxObjects(3)
                .idle(cache -> cache.maximumSize(2).executor(Runnable::run))
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RefPoolMetrics(pool, Tags.of("service", "plugins")).bindTo(registry);
        assertMetersMatchStats(registry, pool);
        assertEquals(
                "plugins",
                registry.get("refpool.creations")
                        .tag("pool", "tenants")
                        .functionCounter()
                        .getId()
                        .getTag("service"));

        List<Handle<StringBuilder>> held = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            held.add(pool.acquire("a"));
            held.add(pool.acquire("a"));
            held.add(pool.acquire("b"));
            pool.acquire("c").close(); // idle
        }
        assertMetersMatchStats(registry, pool); // 2 live, 1 idle

        CompletableFuture<Handle<StringBuilder>> waiter =
                pool.acquireAsync("d", CancellationToken.none()).toCompletableFuture();
        held.remove(0).close(); // off attachment: a pending release
        assertEquals(1, pool.stats().pendingDecrements());
        assertMetersMatchStats(registry, pool);

        pool.flush();
        assertTrue(waiter.isDone(), "'c' was evicted for capacity: 'd' got a permit");
        assertMetersMatchStats(registry, pool);

        try (Attachment attached = pool.attach()) {
            held.forEach(Handle::close);
            waiter.join().close();
            pool.invalidate("a");
            pool.acquire("e").close();
        }
        pool.clearIdle();
        assertMetersMatchStats(registry, pool);
        pool.close();
        assertMetersMatchStats(registry, pool);
        assertEquals(0.0, gauge(registry, "refpool.objects", "pool", "tenants", "state", "live"));
        assertEquals(0.0, gauge(registry, "refpool.objects", "pool", "tenants", "state", "idle"));
    }

    private static Timer timer(MeterRegistry registry, String name, String... tags) {
        Timer timer = registry.find(name).tags(tags).timer();
        assertNotNull(timer, name + " " + List.of(tags));
        return timer;
    }

    @Test
    void timersCountWaitsUsesAndCreations() throws Exception {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(key -> {
                    Thread.sleep(5); // a factory that takes at least 5 ms
                    return new StringBuilder(key);
                })
                .name("tenants")
                .recordTimings(true)
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RefPoolMetrics(pool).bindTo(registry);
        Timer objectWait = timer(registry, "refpool.wait", "pool", "tenants", "resource", "object");
        Timer sectionWait = timer(registry, "refpool.wait", "pool", "tenants", "resource", "section");
        Timer use = timer(registry, "refpool.use", "pool", "tenants");
        Timer creation = timer(registry, "refpool.creation", "pool", "tenants");

        try (Attachment attached = pool.attach();
                Handle<StringBuilder> handle = pool.acquire("a")) {
            assertEquals(1, creation.count());
            assertTrue(
                    creation.max(TimeUnit.MILLISECONDS) >= 5,
                    "the factory's 5 ms: " + creation.max(TimeUnit.MILLISECONDS));
            assertEquals(1, objectWait.count(), "the acquire");
            assertTrue(objectWait.max(TimeUnit.MILLISECONDS) >= 5, "the acquire waited for the creation");
            assertEquals(0, use.count(), "the handle is still open");
            handle.section().close();
            assertEquals(1, sectionWait.count(), "Handle.section()");
        }
        assertEquals(1, use.count(), "the handle's life");

        pool.run("a", session -> Thread.sleep(5));
        assertEquals(2, objectWait.count(), "the call's wait for the object");
        assertEquals(2, sectionWait.count(), "the call's wait for the section");
        assertEquals(2, use.count(), "the call's function");
        assertTrue(use.max(TimeUnit.MILLISECONDS) >= 5, "the function's 5 ms");

        pool.callAsync("a", CancellationToken.none(), StringBuilder::length)
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        assertEquals(3, objectWait.count());
        assertEquals(3, sectionWait.count(), "the callAsync's wait for the section");
        assertEquals(3, use.count());
        pool.acquireAsync("a", CancellationToken.none())
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS)
                .close();
        assertEquals(4, objectWait.count());
        assertEquals(4, use.count());

        pool.run("a", "b", (a, b) -> Thread.sleep(5));
        assertEquals(5, objectWait.count(), "the two-key call's wait for its objects");
        assertEquals(5, sectionWait.count(), "... and for each of its two sections");
        assertEquals(5, use.count(), "the two-key call's function");
        assertTrue(use.max(TimeUnit.MILLISECONDS) >= 5, "the function's 5 ms");

        try (Attachment attached = pool.attach();
                Handle<StringBuilder> handle = pool.acquire("a")) {
            io.refpool.sync.Guard first = handle.sectionAsync(CancellationToken.none())
                    .toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            assertEquals(6, sectionWait.count(), "Handle.sectionAsync, free");
            CompletableFuture<io.refpool.sync.Guard> queued =
                    handle.sectionAsync(CancellationToken.none()).toCompletableFuture();
            assertTrue(!queued.isDone(), "the section is held");
            assertEquals(6, sectionWait.count(), "still waiting");
            first.close();
            queued.get(30, TimeUnit.SECONDS).close();
            assertEquals(7, sectionWait.count(), "Handle.sectionAsync, once granted");
        }
        assertEquals(pool.stats().creations(), creation.count(), "every creation (no idle cache: one per use)");
        pool.close();
    }

    @Test
    void aSectionWaitThatOutlastsTheDefaultWaitInACallIsCountedAsATimeout() throws Exception {
        List<RefPool.Builder<String, StringBuilder>> builders = List.of(
                RefPool.<String, StringBuilder>builder(StringBuilder::new),
                RefPool.<String, StringBuilder>builder(StringBuilder::new).recordTimings(true),
                RefPool.<String, StringBuilder>builder(StringBuilder::new)
                        .interrupter((key, value) -> Interrupter.Outcome.KEEP));
        for (RefPool.Builder<String, StringBuilder> builder : builders) {
            RefPool<String, StringBuilder> pool =
                    builder.name("tenants").defaultWait(Duration.ofMillis(20)).build();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            new RefPoolMetrics(pool).bindTo(registry);
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
                try {
                    pool.run("a", session -> {
                        holding.countDown();
                        assertTrue(done.await(30, TimeUnit.SECONDS));
                    });
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            assertTrue(holding.await(30, TimeUnit.SECONDS));

            assertThrows(io.refpool.sync.WaitTimeoutException.class, () -> pool.call("a", StringBuilder::length));
            assertEquals(1.0, counter(registry, "refpool.timeouts", "pool", "tenants"), "call");
            assertThrows(io.refpool.sync.WaitTimeoutException.class, () -> pool.run("b", "a", (b, a) -> {}));
            assertEquals(2.0, counter(registry, "refpool.timeouts", "pool", "tenants"), "the two-key call");
            try (Attachment attached = pool.attach();
                    Handle<StringBuilder> handle = pool.acquire("a")) {
                assertThrows(io.refpool.sync.WaitTimeoutException.class, () -> handle.call(StringBuilder::length));
            }
            assertEquals(3.0, counter(registry, "refpool.timeouts", "pool", "tenants"), "Handle.call");
            assertMetersMatchStats(registry, pool);

            done.countDown();
            holder.get(30, TimeUnit.SECONDS);
            pool.close();
        }
    }

    @Test
    void aPoolWithoutTimingsHasNoTimersAndItsCountersStill() {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .name("tenants")
                .maxObjects(1)
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RefPoolMetrics(pool).bindTo(registry);
        assertEquals(null, registry.find("refpool.wait").timer());
        assertEquals(null, registry.find("refpool.use").timer());
        Handle<StringBuilder> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("a");
        }
        assertThrows(io.refpool.sync.WaitTimeoutException.class, () -> pool.acquire("b", Duration.ZERO));
        assertEquals(1.0, counter(registry, "refpool.timeouts", "pool", "tenants"));
        assertEquals(0.0, counter(registry, "refpool.held.too.long", "pool", "tenants"));
        held.close();
        pool.close();
    }

    @Test
    void badArgumentsAreRefusedByName() {
        RefPool<String, StringBuilder> pool =
                RefPool.<String, StringBuilder>builder(StringBuilder::new).build();
        assertTrue(assertThrows(NullPointerException.class, () -> new RefPoolMetrics(null))
                .getMessage()
                .contains("pool"));
        assertTrue(assertThrows(NullPointerException.class, () -> new RefPoolMetrics(pool, null))
                .getMessage()
                .contains("extraTags"));
        assertTrue(assertThrows(NullPointerException.class, () -> new RefPoolMetrics(pool).bindTo(null))
                .getMessage()
                .contains("registry"));
        pool.close();
    }

    /** pool-core, pool-sync and Caffeine, without Micrometer: a pool builds, attaches, acquires and closes. */
    @Test
    void poolCoreRunsWithoutMicrometer() throws Exception {
        URL[] path = {
            RefPool.class.getProtectionDomain().getCodeSource().getLocation(),
            io.refpool.sync.AsyncMutex.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation(),
            com.github.benmanes.caffeine.cache.Caffeine.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation(),
        };
        try (URLClassLoader isolated = new URLClassLoader(path, ClassLoader.getPlatformClassLoader())) {
            assertThrows(
                    ClassNotFoundException.class,
                    () -> isolated.loadClass("io.micrometer.core.instrument.MeterRegistry"));
            Class<?> refPool = isolated.loadClass(RefPool.class.getName());
            Class<?> factoryType = isolated.loadClass(ObjectFactory.class.getName());
            Object factory = Proxy.newProxyInstance(
                    isolated,
                    new Class<?>[] {factoryType},
                    (proxy, method, args) ->
                            method.getName().equals("create") ? "object of " + args[0] : method.invoke(this, args));
            Object builder = refPool.getMethod("builder", factoryType).invoke(null, factory);
            builder.getClass().getMethod("recordTimings", boolean.class).invoke(builder, true); // no Micrometer either
            Object pool = builder.getClass().getMethod("build").invoke(builder);
            Object attachment = refPool.getMethod("attach").invoke(pool);
            Object handle = refPool.getMethod("acquire", Object.class).invoke(pool, "k");
            Method get = handle.getClass().getMethod("get");
            get.setAccessible(true);
            assertEquals("object of k", get.invoke(handle));
            close(handle);
            close(attachment);
            Object stats = refPool.getMethod("stats").invoke(pool);
            assertEquals(1L, stats.getClass().getMethod("creations").invoke(stats));
            close(pool);
        }
    }

    private static void close(Object closeable) throws Exception {
        Method close = AutoCloseable.class.getMethod("close");
        close.invoke(closeable);
    }
}
