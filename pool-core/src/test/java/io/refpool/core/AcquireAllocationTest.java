package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An attached acquire and close of a live key allocates nothing, also after the slow path (a
 * creation) ran for many keys, so that the JIT compiled {@code acquire} with its slow path reached.
 * The handle is removed only if {@code acquire} inlines into the caller and has one allocation
 * site; either failing shows here as the handle's 40 bytes
 * ({@link AcquireAfterIdleTrafficAllocationTest} is the same after other traffic shaped the JIT). Measured with the thread's allocation
 * counter, best of several rounds after warm-up, in a JVM of its own.
 */
class AcquireAllocationTest {
    private static final int KEYS = 1_000;

    private final TestResources resources = new TestResources();

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void acquireAndCloseOfLiveKeysAllocatesNothingAfterManyCreations(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool =
                resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        String[] keys = new String[KEYS];
        List<Handle<Resource>> live = new ArrayList<>();
        try (Attachment attached = pool.attach()) {
            for (int i = 0; i < KEYS; i++) {
                keys[i] = "key-" + i;
                live.add(pool.acquire(keys[i])); // the slow path, once per key
            }
            int[] next = {0};
            double bytes = AllocationMeter.bytesPerOp(200_000, () -> {
                String key = keys[next[0]++ % KEYS];
                try (Handle<Resource> handle = pool.acquire(key)) {
                    handle.get();
                }
            });
            assertTrue(bytes < 1.0, () -> "an attached acquire and close of a live key allocated " + bytes + " bytes");
            live.forEach(Handle::close);
        }
    }
}
