package io.refpool.core;

import org.junit.jupiter.api.Test;

/**
 * An attached acquire and close of a live key allocates nothing also after a host's other traffic
 * shaped what C2 compiled first: here every {@link IdleCacheTest} scenario (zero crossings, idle
 * puts, evictions, revives on other threads) runs in this JVM before the measurement, which is
 * what made {@code Handle.close()} compile on its own into a method too big to inline into the
 * measured loop, where the handle then escaped (40 bytes per acquire, in most runs), and, in about
 * one run in sixty, {@code pool.acquire} (see {@link AcquireCompiledOnItsOwnAllocationTest}). In a
 * JVM of its own, as every allocation test.
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
        LiveAcquireAllocation.assertNothingAllocatedInEveryMode("after idle traffic");
    }
}
