package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A request that borrows from its thread's lease allocates nothing: the attach, the acquire (its
 * handle removed by the JIT) and the close, and the closure form. Measured with the thread's
 * allocation counter, best of several rounds after warm-up, in a JVM of its own.
 */
class LeasedRequestAllocationTest {
    @Test
    void aLeasedRequestAllocatesNothing() throws Exception {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .drainDelay(Duration.ofHours(1)));
        String[] keys = new String[64];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "tenant-" + i;
        }
        int[] next = {0};
        for (int i = 0; i < 1_000; i++) { // past the acquires a thread makes before it leases
            try (Attachment attached = pool.attach();
                    Handle<Resource> handle = pool.acquire(keys[next[0]++ & 63])) {
                handle.get();
            }
        }
        double acquire = AllocationMeter.bytesPerOp(200_000, () -> {
            try (Attachment attached = pool.attach();
                    Handle<Resource> handle = pool.acquire(keys[next[0]++ & 63])) {
                handle.get();
            }
        });
        double call = AllocationMeter.bytesPerOp(200_000, () -> pool.call(keys[next[0]++ & 63], r -> r));
        for (String key : keys) {
            assertEquals(
                    1, pool.core().leasesForTests().leasesOn(key), () -> key + " is leased: the requests borrowed");
        }
        assertTrue(acquire < 1.0, () -> "a leased attach, acquire and close allocated " + acquire + " bytes");
        assertTrue(call < 1.0, () -> "a leased pool.call allocated " + call + " bytes");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
