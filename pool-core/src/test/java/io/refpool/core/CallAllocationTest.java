package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A {@code pool.call} of a live key, on an attached thread, allocates nothing when the pool has no
 * interrupter and no section hooks: those options cost the request path one field read when off.
 * In a JVM of its own, as every allocation test.
 */
class CallAllocationTest {
    private final TestResources resources = new TestResources();

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCallOfALiveKeyWithNeitherOptionAllocatesNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool =
                resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
        try (Attachment attached = pool.attach();
                Handle<Resource> live = pool.acquire("k")) {
            double bytes = AllocationMeter.bytesPerOp(200_000, () -> pool.call("k", CallAllocationTest::touch));
            assertTrue(bytes < 1.0, () -> "a call of a live key allocated " + bytes + " bytes");
        }
    }

    private static Resource touch(Resource resource) {
        return resource;
    }
}
