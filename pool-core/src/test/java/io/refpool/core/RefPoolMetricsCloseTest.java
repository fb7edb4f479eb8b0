package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * {@code RefPoolMetrics.close()} with a registry whose {@code remove} throws: the other registries
 * still lose their meters, the failure reaches the caller, and the failing registry is not left
 * bound without its timers: binding it again registers and records as a first binding does.
 */
class RefPoolMetricsCloseTest {
    /** A registry whose remove throws while {@code failing} is set. */
    static final class RemoveFailsRegistry extends SimpleMeterRegistry {
        volatile boolean failing = true;

        @Override
        public Meter remove(Meter meter) {
            if (failing) {
                throw new IllegalStateException("remove refused");
            }
            return super.remove(meter);
        }
    }

    @Test
    void closeUnbindsTheOtherRegistriesWhenOneRegistryThrows() throws Exception {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(k -> new Object())
                .name("close-throws")
                .recordTimings(true)
                .build();
        RefPoolMetrics metrics = new RefPoolMetrics(pool);
        RemoveFailsRegistry one = new RemoveFailsRegistry();
        RemoveFailsRegistry two = new RemoveFailsRegistry();
        one.failing = false;
        two.failing = false;
        metrics.bindTo(one);
        metrics.bindTo(two);
        // the registry close() visits first is the one that throws; the other must still be unbound
        RemoveFailsRegistry failing = (RemoveFailsRegistry) firstBound(metrics);
        RemoveFailsRegistry healthy = failing == one ? two : one;
        failing.failing = true;
        assertThrows(IllegalStateException.class, metrics::close);
        try {
            assertEquals(
                    0,
                    healthy.getMeters().size(),
                    "close() must remove the meters of every registry it is bound to: " + healthy.getMeters());
        } finally {
            pool.close();
        }
    }

    private static Object firstBound(RefPoolMetrics metrics) throws Exception {
        java.lang.reflect.Field f = RefPoolMetrics.class.getDeclaredField("bindings");
        f.setAccessible(true);
        return ((java.util.Map<?, ?>) f.get(metrics)).keySet().iterator().next();
    }

    @Test
    void aFailedCloseDoesNotLeaveTheRegistryBoundWithoutItsTimers() {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(k -> new Object())
                .name("close-throws-rebind")
                .recordTimings(true)
                .build();
        RefPoolMetrics metrics = new RefPoolMetrics(pool);
        RemoveFailsRegistry registry = new RemoveFailsRegistry();
        metrics.bindTo(registry);
        assertThrows(IllegalStateException.class, metrics::close);
        registry.failing = false;
        metrics.bindTo(registry); // the registry is back: bind again (or: it is still bound, and recording)
        pool.call("a", o -> o);
        long uses = registry.get("refpool.use").timer().count();
        pool.close();
        assertEquals(1, uses, "the call's use is recorded in the registry the metrics are bound to");
    }
}
