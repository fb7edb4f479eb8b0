package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;

/**
 * The measurement the acquire allocation tests share: in each attach mode, an attached acquire and
 * close of a live key, on a pool of its own, allocates nothing, and every object is disposed once,
 * attached.
 */
final class LiveAcquireAllocation {
    private LiveAcquireAllocation() {}

    /** Measures it in every mode; {@code after} says what ran before, for the failure message. */
    static void assertNothingAllocatedInEveryMode(String after) throws Exception {
        for (AttachMode mode : AttachMode.values()) {
            TestResources resources = new TestResources();
            RefPool<String, Resource> pool =
                    resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
            try (Attachment attached = pool.attach()) {
                Handle<Resource> live = pool.acquire("live");
                double bytes = AllocationMeter.bytesPerOp(200_000, () -> {
                    try (Handle<Resource> handle = pool.acquire("live")) {
                        handle.get();
                    }
                });
                assertTrue(
                        bytes < 1.0,
                        () -> mode + ": an attached acquire and close of a live key allocated " + bytes + " bytes "
                                + after);
                live.close();
            } finally {
                pool.close();
            }
            resources.assertAllDisposedOnceAttached();
        }
    }
}
