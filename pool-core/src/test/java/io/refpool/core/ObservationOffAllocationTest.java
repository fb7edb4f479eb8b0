package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * With timings and the held-too-long check off (the default, said here explicitly), an attached
 * {@code pool.call} and an attached acquire and close of a live key allocate nothing: the pool
 * makes no record of the handle or the call and reads no clock for them. Measured as
 * {@link AcquireAllocationTest} does, in a JVM of its own.
 */
class ObservationOffAllocationTest {
    private static final int KEYS = 100;

    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(
                resources.builder().attachMode(mode).recordTimings(false).drainDelay(Duration.ofHours(1)));
    }

    private static String[] keys() {
        String[] keys = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = "key-" + i;
        }
        return keys;
    }

    /** {@return a handle to each key}, so that the measured operations find every key live */
    private static Handle<?>[] acquireAll(RefPool<String, Resource> pool, String[] keys) {
        Handle<?>[] live = new Handle<?>[keys.length];
        for (int i = 0; i < keys.length; i++) {
            live[i] = pool.acquire(keys[i]);
        }
        return live;
    }

    private static void closeAll(Handle<?>[] handles) {
        for (Handle<?> handle : handles) {
            handle.close();
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachedCallOfALiveKeyAllocatesNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        String[] keys = keys();
        try (Attachment attached = pool.attach()) {
            Handle<?>[] live = acquireAll(pool, keys);
            int[] next = {0};
            double bytes =
                    AllocationMeter.bytesPerOp(200_000, () -> pool.call(keys[next[0]++ % KEYS], resource -> resource));
            assertTrue(bytes < 1.0, () -> "an attached call of a live key allocated " + bytes + " bytes");
            closeAll(live);
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachedAcquireAndCloseOfALiveKeyAllocatesNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        String[] keys = keys();
        try (Attachment attached = pool.attach()) {
            Handle<?>[] live = acquireAll(pool, keys);
            int[] next = {0};
            double bytes = AllocationMeter.bytesPerOp(200_000, () -> {
                try (Handle<Resource> handle = pool.acquire(keys[next[0]++ % KEYS])) {
                    handle.get();
                }
            });
            assertTrue(bytes < 1.0, () -> "an attached acquire and close of a live key allocated " + bytes + " bytes");
            closeAll(live);
        }
    }
}
