package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * An idle object whose expiry finds it used since the cache took it is put back; with an {@code
 * acquireAsync} of its key in line, the line gets its permit rather than the object, which was idle
 * a whole expiry period and is lent only through its revive check (validator, lifetime).
 */
class ExpiredButUsedObjectAndTheLineTest {
    private static final Duration EXPIRY = Duration.ofMinutes(1);

    /** The validator refuses every object once the object was put back: the waiter gets a new one. */
    @Test
    void anObjectPutBackAfterItsExpiryIsNotLentToAWaiterOfItsKeyWithoutItsReviveCheck() throws Exception {
        AtomicBoolean refuse = new AtomicBoolean();
        AtomicInteger checks = new AtomicInteger();
        assertTheWaiterGetsANewObject(
                builder -> builder.validator((String key, Session session) -> {
                    checks.incrementAndGet();
                    return !refuse.get();
                }),
                EXPIRY.plusSeconds(1),
                () -> refuse.set(true)); // from now on the validator refuses every object
    }

    /** The object put back is past its lifetime: the waiter gets a new one. */
    @Test
    void anObjectPutBackAfterItsExpiryIsNotLentToAWaiterOfItsKeyPastItsLifetime() throws Exception {
        // past the expiry and past the lifetime (at most 2 minutes)
        assertTheWaiterGetsANewObject(
                builder -> builder.maxLifetime(Duration.ofMinutes(2)), Duration.ofMinutes(3), () -> {});
    }

    /**
     * A bound of one object, held by x. An acquireAsync of "a" is held before it joins the line;
     * meanwhile x idles, "a" is made (reclaiming x) and revived once, so its spell is past its put;
     * the clock passes {@code idleFor}, the cache queues a's expiry, {@code thenChange} runs, the
     * waiter joins the line, and a flush applies the expiry: a used since its put is put back.
     */
    private static void assertTheWaiterGetsANewObject(
            UnaryOperator<RefPool.Builder<String, Session>> checks, Duration idleFor, Runnable thenChange)
            throws Exception {
        Engine engine = new Engine();
        ManualTicker ticker = new ManualTicker();
        RefPool<String, Session> pool = engine.build(checks.apply(engine.builder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .maxObjects(1)
                .ticker(ticker)
                .idle(cache -> cache.maximumSize(10).expireAfterAccess(EXPIRY))));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        try {
            Handle<Session> x;
            try (Attachment attached = pool.attach()) {
                x = pool.acquire("x"); // holds the one permit
            }
            PointPauses.Pause joining = hooks.pause(Point.CAPACITY_JOINING, null);
            TestKit.Forked<CompletableFuture<Handle<Session>>> waiter =
                    TestKit.fork("waiter", () -> pool.acquireAsync("a", CancellationToken.none())
                            .toCompletableFuture());
            joining.awaitArrival(); // "a" has no object: the waiter is about to join the line
            try (Attachment attached = pool.attach()) {
                x.close(); // x idles (nobody in line yet)
                pool.acquire("a").close(); // reclaims x, makes a, idles it: the cache's put
                pool.acquire("a").close(); // revived through its check, idle again: no put, a new spell
            }
            Session a = engine.created.stream()
                    .filter(s -> s.key.equals("a"))
                    .findFirst()
                    .orElseThrow();
            ticker.advance(idleFor);
            pool.core().control().cachedCount(); // the cache's maintenance: a's expiry is queued
            thenChange.run();
            PointPauses.Pause queued = hooks.pause(Point.CAPACITY_QUEUED, null);
            joining.proceed();
            queued.awaitArrival(); // the waiter for "a" is in line, counted
            pool.flush(); // applies a's expiry: used since its put, so it is put back, with a waiter in line
            queued.proceed();
            Handle<Session> got = waiter.join().get(BOUND.toSeconds(), TimeUnit.SECONDS);
            try {
                assertNotSame(a, got.get(), "the object put back was lent to the waiter unchecked");
            } finally {
                got.close();
            }
        } finally {
            pool.close(Duration.ofSeconds(10));
        }
    }
}
