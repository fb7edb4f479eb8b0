package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.AllocationMeter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * An attached acquire and close of a live key allocates nothing also after a host's other traffic
 * shaped what C2 compiled first: here every {@link IdleCacheTest} scenario (zero crossings, idle
 * puts, evictions, revives on other threads) runs in this JVM before the measurement, which is
 * what made {@code Handle.close()} compile on its own into a method too big to inline into the
 * measured loop, where the handle then escaped (40 bytes per acquire, in most runs). In a JVM of
 * its own, as every allocation test.
 */
class AcquireAfterIdleTrafficAllocationTest {
    @Test
    void acquireAndCloseOfALiveKeyAllocatesNothingAfterIdleTraffic() throws Exception {
        IdleCacheTest traffic = new IdleCacheTest();
        traffic.aReleaseToZeroIdlesTheObjectAndTheNextAcquireRevivesIt();
        traffic.expiryDisposesTheObjectExactlyOnceAttached();
        traffic.anObjectRevivedAfterItsEvictionWasQueuedStaysLive();
        traffic.anObjectIdledAgainBeforeItsQueuedEvictionIsAppliedStaysIdle();
        traffic.anObjectRevivedWhileItsReleaserPutsItInTheCacheIsNeverDisposedWhileLive();
        traffic.aShortRealExpiryDisposesOnTheDrainerAttached();
        traffic.sizeEvictionDisposesEachEvictedObjectExactlyOnceAttached();
        traffic.withoutAnIdleCacheTheObjectIsDisposedAtZero();
        traffic.revivesOnOtherThreadsAreCountedWhileTheyLiveAndAfterTheyEnd();
        for (AttachMode mode : AttachMode.values()) {
            assertLiveAcquireAllocatesNothing(mode);
        }
    }

    private static void assertLiveAcquireAllocatesNothing(AttachMode mode) throws Exception {
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
                    () -> mode + ": an attached acquire and close of a live key allocated " + bytes
                            + " bytes after idle traffic");
            live.close();
        } finally {
            pool.close();
        }
    }
}
