package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attaching with nothing pending allocates nothing: a nested attach and close, and an uncontended
 * outermost one (measured with the thread's allocation counter, best of several rounds after
 * warm-up, so a coverage agent or a JIT compilation cannot decide the result). Like every
 * allocation test, it runs in a JVM of its own, so escape analysis sees this code compiled from its
 * own profile.
 */
class AttachFastPathAllocationTest {
    private static final int NESTED_ATTACHES = 1_000_000;

    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void nestedAttachWithNothingPendingAllocatesNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        try (Attachment outer = pool.attach()) {
            double bytes = AllocationMeter.bytesPerOp(
                    NESTED_ATTACHES, () -> pool.attach().close());
            assertTrue(bytes < 1.0, () -> "a nested attach and close allocated " + bytes + " bytes");
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void uncontendedOutermostAttachAllocatesNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        double bytes = AllocationMeter.bytesPerOp(200_000, () -> pool.attach().close());
        assertTrue(bytes < 1.0, () -> "an uncontended attach and close allocated " + bytes + " bytes");
    }
}
