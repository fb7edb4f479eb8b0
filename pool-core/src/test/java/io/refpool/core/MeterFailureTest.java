package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.pause.PauseDetector;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.refpool.core.TestResources.Resource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A timer of the registry a pool's metrics are bound to throws an {@code Error} on every record:
 * the handle's close, the acquire and the creation that recorded it still do their work, and
 * every object is disposed exactly once at close. (A meter's failure is not the caller's.)
 */
class MeterFailureTest {
    /** A registry whose timer named {@code failing} throws an {@code Error} on record. */
    static final class FailingTimerRegistry extends SimpleMeterRegistry {
        private final String failing;

        FailingTimerRegistry(String failing) {
            this.failing = failing;
        }

        @Override
        protected Timer newTimer(Meter.Id id, DistributionStatisticConfig config, PauseDetector pauseDetector) {
            Timer real = super.newTimer(id, config, pauseDetector);
            if (!id.getName().equals(failing)) {
                return real;
            }
            return (Timer) Proxy.newProxyInstance(
                    Timer.class.getClassLoader(), new Class<?>[] {Timer.class}, (proxy, method, args) -> {
                        if (method.getName().equals("record")) {
                            throw new AssertionError("the meter failed");
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"refpool.use", "refpool.creation", "refpool.wait"})
    void aTimerThatThrowsAnErrorLosesNoObject(String timer) {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool =
                resources.build(resources.builder().name("meter-" + timer).recordTimings(true));
        new RefPoolMetrics(pool).bindTo(new FailingTimerRegistry(timer));

        assertDoesNotThrow(() -> {
            try (Attachment attached = pool.attach()) {
                pool.acquire("a").close(); // created, used, released: idle
                pool.acquire("a").close(); // revived
                pool.call("b", resource -> resource);
            }
        });
        pool.close();

        assertEquals(0, pool.stats().live(), () -> "stats " + pool.stats() + ", errors " + resources.errors);
        assertEquals(1, resources.created("a").disposals.get(), "a, disposed once");
        assertEquals(1, resources.created("b").disposals.get(), "b, disposed once");
    }
}
