package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The hot key's zero: an object the idle cache holds, whose count drops to 0 and comes back, writes
 * nothing but its count unless its idle spell was recorded (by the cache's put or an eviction) since
 * it began. These tests force a release's idle decision to wait at count 0 while another thread
 * revives the object, and an expiry to be decided in between: an object used after the cache took
 * it is put again, never disposed for that expiry, and disposed once idle for a whole period.
 */
class HotKeyZeroTest {
    private static final Duration EXPIRY = Duration.ofMinutes(1);

    private final Engine engine = new Engine();
    private final ManualTicker ticker = new ManualTicker();
    private final RefPool<String, Session> pool = engine.build(engine.builder()
            .drainDelay(Duration.ofHours(1))
            .idle(cache -> cache.expireAfterAccess(EXPIRY).ticker(ticker).executor(Runnable::run)));
    private final TestPoolHooks hooks = new TestPoolHooks();

    HotKeyZeroTest() {
        pool.core().setHooks(hooks);
    }

    /** Where the releaser of {@link #closeAndWaitAtZero} waits. */
    private TestPoolHooks.Pause atZero;

    /** Closes {@code held} on a thread of its own, which waits at count 0 before its idle decision. */
    private TestKit.Forked<Void> closeAndWaitAtZero(Handle<Session> held) throws InterruptedException {
        TestKit.Forked<Void> releaser = TestKit.unstartedRun(
                "releaser",
                () -> pool.attached(() -> {
                    held.close(); // count 0, the object still cached: the idle decision waits here
                    return null;
                }));
        atZero = hooks.pause(Point.REACHED_ZERO, releaser.thread);
        releaser.start();
        atZero.awaitArrival();
        return releaser;
    }

    private Session use(String key) {
        try (Attachment attached = pool.attach();
                Handle<Session> handle = pool.acquire(key)) {
            return handle.get();
        }
    }

    @Test
    void aReviveWhileAnotherReleaserDecidesAtZeroKeepsTheObjectThroughTheNextExpiry() throws Exception {
        Session k = use("k"); // put at 0: its spell recorded
        Handle<Session> held = pool.attached(() -> pool.acquire("k"));
        TestKit.Forked<Void> releaser = closeAndWaitAtZero(held);

        ticker.advance(EXPIRY.plusSeconds(1)); // the put's entry has expired
        assertSame(k, use("k")); // revived at count 0 and idled again on this thread meanwhile
        use("trigger-1"); // a new key's put runs the expiry; the detach applies the eviction
        assertFalse(k.isDisposed(), "used since the cache took it: put again, not disposed");
        assertEquals(0, pool.stats().evictions(EvictionCause.EXPIRED));

        atZero.proceed(); // the waiting releaser decides now: the object is cached again
        releaser.join();
        assertFalse(k.isDisposed());
        assertEquals(2, pool.stats().idle(), "\"k\" and \"trigger-1\"");

        ticker.advance(EXPIRY.plusSeconds(1)); // put again at the last expiry, used by the releaser since
        use("trigger-2");
        ticker.advance(EXPIRY.plusSeconds(1)); // idle for a whole period since
        use("trigger-3");
        assertTrue(k.isDisposed(), "disposed within two periods of its last idle");
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }

    @Test
    void anExpiryDecidedWhileAReleaserWaitsAtZeroDisposesOnceAndLeavesNothingCached() throws Exception {
        Session k = use("k");
        Handle<Session> held = pool.attached(() -> pool.acquire("k")); // revived: nothing recorded since
        ticker.advance(EXPIRY.plusSeconds(1));
        TestKit.Forked<Void> releaser = closeAndWaitAtZero(held);

        use("trigger"); // the expiry's drain sees count 0 and the spell it was put in: disposes
        assertTrue(k.isDisposed(), "idle by its count, its spell never advanced by the waiting zero");
        atZero.proceed(); // the releaser finds it uncached and claimed: its put takes it out again
        releaser.join();
        assertEquals(1, k.disposals.get(), "once");
        assertEquals(1, pool.core().control().cachedCount(), "only \"trigger\" stays cached");
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
