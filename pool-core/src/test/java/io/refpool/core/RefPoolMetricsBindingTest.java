package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.refpool.testkit.TestKit.Forked;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link RefPoolMetrics} bindings over a registry's life: a registry keeps one meter per name and
 * tags, so a second pool of a name must not be handed the first one's meters without a word, a
 * binding repeated must not record durations twice, and a binding can be taken back.
 */
class RefPoolMetricsBindingTest {
    private static RefPool<String, StringBuilder> pool(String name) {
        return RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .name(name)
                .recordTimings(true)
                .build();
    }

    private static double live(MeterRegistry registry, String pool) {
        return registry.get("refpool.objects")
                .tags("pool", pool, "state", "live")
                .gauge()
                .value();
    }

    private static void holdTwo(RefPool<String, StringBuilder> pool) {
        try (Attachment attached = pool.attach()) {
            pool.acquire("x"); // left open: live
            pool.acquire("y");
        }
    }

    /**
     * A pool named {@code lua} bound to {@code registry}, holding two objects, then closed; a second
     * pool of that name refused there, and nothing registered for it.
     */
    private static void reloadIsRefused(MeterRegistry registry) {
        RefPool<String, StringBuilder> first = pool("lua");
        new RefPoolMetrics(first).bindTo(registry);
        holdTwo(first);
        first.close();

        RefPool<String, StringBuilder> second = pool("lua");
        int metersBefore = registry.getMeters().size();
        IllegalStateException refused =
                assertThrows(IllegalStateException.class, () -> new RefPoolMetrics(second).bindTo(registry));
        assertTrue(refused.getMessage().contains("pool=lua"), refused.getMessage());
        assertEquals(metersBefore, registry.getMeters().size(), "a refused binding registers nothing");
        second.close();
    }

    /**
     * A host replaces its pool by a new one of the same name (a reload) and binds it as it bound the
     * first. Micrometer hands back the meters already registered under that name and tags, which read
     * the old pool: before the fix the new pool's objects were never reported, and nothing said so.
     */
    @Test
    void aSecondPoolOfTheSameNameIsRefusedRatherThanShadowedByTheFirstOnesMeters() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        reloadIsRefused(registry);
    }

    /**
     * The same reload behind a filter that renames the pool's meters, as a host's naming convention
     * does: the registry holds them under the new names, so a check that looks them up by the names
     * the binding asked for finds nothing, and the second pool's gauges and timers were merged with
     * the first's without a word.
     */
    @Test
    void aSecondPoolOfTheSameNameIsRefusedBehindAFilterThatRenamesTheMeters() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(MeterFilter.renameTag("refpool.objects", "state", "kind"));
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                return id.withName("host." + id.getName());
            }
        });
        reloadIsRefused(registry);
        assertEquals(
                2.0,
                registry.get("host.refpool.objects")
                        .tags("pool", "lua", "kind", "live")
                        .gauge()
                        .value(),
                "the first pool's gauge is left as it was");
    }

    /** One binder bound to one registry twice (as a framework may do): each duration counted once. */
    @Test
    void bindingTwiceToOneRegistryRecordsEachDurationOnce() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RefPool<String, StringBuilder> pool = pool("twice");
        RefPoolMetrics metrics = new RefPoolMetrics(pool);
        metrics.bindTo(registry);
        metrics.bindTo(registry);
        pool.call("a", sb -> sb.append('!'));
        assertEquals(1, registry.get("refpool.use").timer().count(), "one call, one use");
        assertEquals(1, registry.get("refpool.creation").timer().count(), "one object, one creation");
        pool.close();
    }

    /** Closing the old pool's binding removes its meters: the new pool of the name is reported, not the old. */
    @Test
    void closingTheOldBindingLetsANewPoolOfTheNameBeReported() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SimpleMeterRegistry other = new SimpleMeterRegistry();
        RefPool<String, StringBuilder> first = pool("lua");
        RefPoolMetrics firstMetrics = new RefPoolMetrics(first);
        firstMetrics.bindTo(registry);
        firstMetrics.bindTo(other);
        holdTwo(first);
        assertEquals(2.0, live(registry, "lua"));
        first.close();
        firstMetrics.close();
        assertTrue(registry.getMeters().isEmpty(), "left behind: " + registry.getMeters());
        assertTrue(other.getMeters().isEmpty(), "left behind: " + other.getMeters());

        RefPool<String, StringBuilder> second = pool("lua");
        RefPoolMetrics secondMetrics = new RefPoolMetrics(second);
        secondMetrics.bindTo(registry);
        try (Attachment attached = second.attach()) {
            second.acquire("z");
        }
        assertEquals(second.stats().live(), (long) live(registry, "lua"));
        assertEquals(
                1.0,
                registry.get("refpool.creations")
                        .tags("pool", "lua")
                        .functionCounter()
                        .count());

        secondMetrics.close(); // its durations are no longer recorded anywhere
        second.call("w", sb -> sb);
        assertTrue(registry.find("refpool.use").timers().isEmpty());
        second.close();
    }

    /** A registry whose meters, read by a chosen thread, are handed back only once the test says so. */
    static final class PausingRegistry extends SimpleMeterRegistry {
        final CountDownLatch read = new CountDownLatch(1);
        final CountDownLatch goOn = new CountDownLatch(1);
        volatile Thread pauses;

        @Override
        public List<Meter> getMeters() {
            List<Meter> meters = super.getMeters();
            if (pauses == Thread.currentThread()) {
                pauses = null;
                read.countDown();
                try {
                    goOn.await(BOUND.toSeconds(), TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return meters;
        }
    }

    /**
     * Two pools of one name bound to one registry at once: the first has read the registry's meters
     * and not registered yet when the second binds. Exactly one of them is refused.
     */
    @Test
    void ofTwoPoolsOfOneNameBoundAtOnceOneIsRefused() throws Exception {
        RefPool<String, StringBuilder> first = pool("twin");
        RefPool<String, StringBuilder> second = pool("twin");
        PausingRegistry registry = new PausingRegistry();
        Forked<Void> firstBinds = unstartedRun("first", () -> new RefPoolMetrics(first).bindTo(registry));
        registry.pauses = firstBinds.thread;
        firstBinds.thread.start();
        assertTrue(registry.read.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the first read the registry");
        Forked<Void> secondBinds = forkRun("second", () -> new RefPoolMetrics(second).bindTo(registry));
        eventually().until(() -> secondBinds.outcome.isDone() || secondBinds.thread.getState() == Thread.State.BLOCKED);
        registry.goOn.countDown();
        int refused = 0;
        for (Forked<Void> binding : List.of(firstBinds, secondBinds)) {
            Throwable failure =
                    binding.outcome.handle((done, thrown) -> thrown).get(BOUND.toSeconds(), TimeUnit.SECONDS);
            refused += failure instanceof IllegalStateException ? 1 : 0;
        }
        assertEquals(1, refused, "exactly one of the two bindings refused");
        first.close();
        second.close();
    }
}
