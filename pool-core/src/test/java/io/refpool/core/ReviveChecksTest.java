package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The revive checks: the validator, run when an acquire revives an idle object and never on an
 * object in use, and the maximum lifetime, read at count 0 and on revive, never under an open
 * handle. Races are forced with latches inside the validator and the pool's test hooks; time is a
 * fake ticker moved by hand.
 */
class ReviveChecksTest {
    private static final Duration LIFETIME = Duration.ofSeconds(100);

    /** Each object's disposal cause, by identity; a second disposal fails the test. */
    private final Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();

    private final AtomicInteger created = new AtomicInteger();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final AtomicLong now = new AtomicLong();

    private RefPool.Builder<String, Object> builder() {
        return RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(100))
                .errorListener(errors::add)
                .ticker(now::get)
                .disposer((String key, Object value, DisposalCause cause) -> {
                    if (disposed.put(value, cause) != null) {
                        throw new AssertionError("disposed twice: " + value);
                    }
                });
    }

    private RefPool<String, Object> build(RefPool.Builder<String, Object> builder) {
        return builder.build(key -> {
            created.incrementAndGet();
            return new Object();
        });
    }

    private RefPool<String, Object> validated(ObjectValidator<String, Object> check) {
        return build(builder().validator(check));
    }

    private static Object current(RefPool<String, Object> pool, String key) {
        return pool.call(key, value -> value);
    }

    private static Handle<Object> acquire(RefPool<String, Object> pool, String key) {
        return pool.attached(() -> pool.acquire(key));
    }

    private static void close(RefPool<String, Object> pool, Handle<Object> handle) {
        pool.runAttached(handle::close);
    }

    @Test
    void theValidatorChecksARevivedObjectAndNeverOneInUse() {
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Object> pool = validated((key, value) -> checks.incrementAndGet() > 0);
        Handle<Object> held = acquire(pool, "k");
        Object first = held.get();
        assertSame(first, current(pool, "k"), "in use: shared");
        Handle<Object> second = acquire(pool, "k");
        assertEquals(0, checks.get(), "a created object and one in use are never checked");
        close(pool, held);
        close(pool, second);

        assertSame(first, current(pool, "k"), "idle, revived through its check");
        assertEquals(1, checks.get());
        assertSame(first, current(pool, "k"));
        assertEquals(2, checks.get(), "each revive checks once");
        assertEquals(2, pool.stats().idleHits(), "a passed check counts as an idle hit");
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(first));
    }

    @Test
    void aRefusedObjectIsDisposedAndTheAcquireGetsANewOne() {
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Object> pool = validated((key, value) -> checks.incrementAndGet() > 1);
        Object first = current(pool, "k");
        Object second = current(pool, "k"); // the first check refuses
        assertNotSame(first, second);
        assertEquals(DisposalCause.FAILED_VALIDATION, disposed.get(first));
        assertEquals(1, pool.stats().disposals(DisposalCause.FAILED_VALIDATION));
        assertSame(second, current(pool, "k"), "the second check passes");
        assertEquals(2, created.get());
        pool.close();
    }

    @Test
    void aThrowingValidatorCountsAsARefusalIsReportedAndLosesNoCapacity() {
        RefPool<String, Object> pool = build(builder().maxObjects(1).validator((String key, Object value) -> {
            throw new java.io.IOException("engine gone");
        }));
        Object first = current(pool, "k");
        Object second = current(pool, "k"); // revived, checked, refused: a new one under the same permit
        assertNotSame(first, second);
        assertEquals(DisposalCause.FAILED_VALIDATION, disposed.get(first));
        assertEquals(1, errors.size());
        assertEquals(PoolError.Kind.REVIVE_CHECK_FAILED, errors.get(0).kind());
        assertTrue(errors.get(0).cause() instanceof java.io.IOException);
        Object other = current(pool, "m"); // the one permit: reclaimed from "k"'s idle object
        assertEquals(DisposalCause.CAPACITY, disposed.get(second));
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(other));
        assertEquals(3, disposed.size(), "each object disposed once");
    }

    /**
     * Two acquires revive one idle object: the first claims it and checks; the second, coming while
     * the check runs, waits for the verdict. Refused: both get the one new object (single flight),
     * never the disposed one. Fails if a second acquire may retain an object under check (it would
     * share the old object), or if it does not wait for the verdict (two creations).
     */
    @Test
    void anAcquireDuringARefusingCheckWaitsAndSharesTheNewObject() throws Exception {
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Object> pool = validated((key, value) -> {
            checks.incrementAndGet();
            checking.countDown();
            verdict.await();
            return false;
        });
        Object old = current(pool, "k");
        Forked<Object> first = fork("first", () -> current(pool, "k"));
        assertTrue(checking.await(BOUND.toSeconds(), TimeUnit.SECONDS));

        CompletableFuture<Handle<Object>> second =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        assertFalse(second.isDone(), "waits for the check under way");
        verdict.countDown();

        Object fresh = first.join();
        Handle<Object> secondHandle = second.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertNotSame(old, fresh);
        assertSame(fresh, secondHandle.get(), "the one new object, never the disposed one");
        assertEquals(1, checks.get(), "one check for the two acquires");
        assertEquals(2, created.get());
        assertEquals(DisposalCause.FAILED_VALIDATION, disposed.get(old));
        close(pool, secondHandle);
        pool.close();
    }

    /** The same race, passed: the waiting acquire shares the checked object; nothing is created. */
    @Test
    void anAcquireDuringAPassingCheckSharesTheCheckedObject() throws Exception {
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        RefPool<String, Object> pool = validated((key, value) -> {
            checking.countDown();
            verdict.await();
            return true;
        });
        Object old = current(pool, "k");
        Forked<Handle<Object>> first = fork("first", () -> acquire(pool, "k"));
        assertTrue(checking.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        Forked<Object> second = fork("second", () -> current(pool, "k"));
        io.refpool.testkit.TestKit.awaitParked(second.thread);
        verdict.countDown();

        Handle<Object> handle = first.join();
        assertSame(old, handle.get());
        assertSame(old, second.join());
        assertEquals(1, created.get());
        close(pool, handle);
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(old));
    }

    /**
     * An idle object under its revive check still exists and holds its permit: {@code stats()}
     * counts it idle, as the metrics' readings do, and {@code liveKeys()} lists its key.
     */
    @Test
    void anObjectUnderItsCheckIsCountedIdleAndItsKeyListed() throws Exception {
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        RefPool<String, Object> pool = validated((key, value) -> {
            checking.countDown();
            verdict.await();
            return true;
        });
        Object old = current(pool, "k");
        Forked<Object> reviving = fork("reviving", () -> current(pool, "k"));
        assertTrue(checking.await(BOUND.toSeconds(), TimeUnit.SECONDS));

        PoolStats during = pool.stats();
        Set<String> keys = pool.liveKeys();
        long readingsIdle = pool.core().readings().idleNow();
        verdict.countDown();
        assertSame(old, reviving.join());

        assertEquals(1, readingsIdle, "the readings count it idle");
        assertEquals(0, during.live(), during.toString());
        assertEquals(1, during.idle(), "stats() counts it idle too: " + during);
        assertEquals(Set.of("k"), keys, "its key has an object");
        pool.close();
    }

    @Test
    void anObjectPastItsLifetimeIsKeptUnderAnOpenHandleAndRetiredAtItsClose() {
        RefPool<String, Object> pool = build(builder().maxLifetime(LIFETIME));
        Handle<Object> held = acquire(pool, "k");
        Object old = held.get();
        now.addAndGet(LIFETIME.toNanos()); // past every jitter
        assertSame(old, current(pool, "k"), "in use: shared, its age not even read");
        assertFalse(disposed.containsKey(old), "never under an open handle");

        close(pool, held);
        assertEquals(DisposalCause.LIFETIME, disposed.get(old), "retired at count zero");
        Object fresh = current(pool, "k");
        assertNotSame(old, fresh);
        assertEquals(1, pool.stats().disposals(DisposalCause.LIFETIME));
        pool.close();
    }

    /** Idle past its limit: the acquire that would revive it retires it and makes a new one. */
    @Test
    void anIdleObjectPastItsLifetimeIsRetiredOnRevive() {
        RefPool<String, Object> pool = build(builder().maxLifetime(LIFETIME));
        Object old = current(pool, "k");
        long shortest = LIFETIME.toNanos() - LIFETIME.toNanos() / 10;
        now.addAndGet(shortest - 1);
        assertSame(old, current(pool, "k"), "younger than the shortest jittered limit: kept");
        now.set(LIFETIME.toNanos());
        Object fresh = current(pool, "k");
        assertNotSame(old, fresh);
        assertEquals(DisposalCause.LIFETIME, disposed.get(old));
        pool.close();
    }

    /** Objects created together retire over the last tenth of their lifetime, not all at once. */
    @Test
    void theJitterSpreadsTheRetirementOfObjectsCreatedTogether() {
        RefPool<String, Object> pool = build(builder().maxLifetime(LIFETIME));
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            keys.add("k" + i);
            current(pool, "k" + i);
        }
        now.set(LIFETIME.toNanos() - LIFETIME.toNanos() / 20); // halfway through the jitter
        keys.forEach(key -> current(pool, key));
        long retired = pool.stats().disposals(DisposalCause.LIFETIME);
        assertTrue(retired > 0 && retired < 20, "some retired, some not: " + retired);
        pool.close();
    }

    /**
     * Two acquires of an expired idle object: the first claims it (held at the claim), the second
     * comes meanwhile and gets the new object, never the retired one; one retirement, one creation.
     * Fails if the second may revive the object under check.
     */
    @Test
    void anAcquireDuringALifetimeRetirementGetsTheNewObject() throws Exception {
        RefPool<String, Object> pool = build(builder().maxLifetime(LIFETIME));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Object old = current(pool, "k");
        now.set(LIFETIME.toNanos());
        PointPauses.Pause claimed = hooks.pause(Point.REVIVE_CLAIMED, null);
        Forked<Object> first = fork("first", () -> current(pool, "k"));
        claimed.awaitArrival();

        CompletableFuture<Handle<Object>> second =
                pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture();
        assertFalse(second.isDone(), "waits for the check under way");
        claimed.proceed();

        Object fresh = first.join();
        Handle<Object> secondHandle = second.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertNotSame(old, fresh);
        assertSame(fresh, secondHandle.get());
        assertEquals(2, created.get());
        assertEquals(DisposalCause.LIFETIME, disposed.get(old));
        assertEquals(1, disposed.size());
        close(pool, secondHandle);
        pool.close();
    }

    /**
     * {@code invalidate(key)} while an acquire holds the idle object claimed, before its check: the
     * claim refuses the invalidation its disposal, so the check disposes it, and the acquire gets a
     * new object. Fails if the check ignores the retirement (the invalidated object is lent).
     */
    @Test
    void anInvalidationBeforeTheCheckDisposesTheObjectThere() throws Exception {
        RefPool<String, Object> pool = validated((key, value) -> true);
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Object old = current(pool, "k");
        PointPauses.Pause claimed = hooks.pause(Point.REVIVE_CLAIMED, null);
        Forked<Object> reviving = fork("reviving", () -> current(pool, "k"));
        claimed.awaitArrival();
        assertTrue(pool.invalidate("k"));
        assertFalse(disposed.containsKey(old), "claimed for its check: not disposed by the invalidation");
        claimed.proceed();

        Object fresh = reviving.join();
        assertNotSame(old, fresh);
        assertEquals(DisposalCause.INVALIDATED, disposed.get(old));
        pool.close();
    }

    /**
     * {@code invalidate(key)} during a check that passes: the acquire keeps the object it checked,
     * the key lets go of it, and it is disposed at its close. Fails if the passed check leaves the
     * retired object in its key's slot (the next acquire shares it).
     */
    @Test
    void anInvalidationDuringAPassingCheckRetiresTheObjectAtItsClose() throws Exception {
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Object> pool = validated((key, value) -> {
            if (checks.incrementAndGet() == 1) {
                checking.countDown();
                verdict.await();
            }
            return true;
        });
        Object old = current(pool, "k");
        Forked<Handle<Object>> reviving = fork("reviving", () -> acquire(pool, "k"));
        assertTrue(checking.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertTrue(pool.invalidate("k"));
        verdict.countDown();

        Handle<Object> handle = reviving.join();
        assertSame(old, handle.get(), "the check passed: the acquire keeps it");
        Object fresh = current(pool, "k");
        assertNotSame(old, fresh, "the key let go of the invalidated object");
        close(pool, handle);
        assertEquals(DisposalCause.INVALIDATED, disposed.get(old));
        pool.close();
    }

    /** Without a lifetime the clock is never read; with one, not on the acquire of an object in use. */
    @Test
    void theClockIsReadOnlyAtCreationCountZeroAndRevive() {
        AtomicInteger reads = new AtomicInteger();
        RefPool<String, Object> off = RefPool.newBuilder()
                .ticker(() -> {
                    reads.incrementAndGet();
                    return now.get();
                })
                .build(key -> new Object());
        Handle<Object> held = acquire(off, "k");
        current(off, "k");
        close(off, held);
        off.close();
        assertEquals(0, reads.get(), "no lifetime: no clock read");

        RefPool<String, Object> on = RefPool.newBuilder()
                .maxLifetime(LIFETIME)
                .ticker(() -> {
                    reads.incrementAndGet();
                    return now.get();
                })
                .build(key -> new Object());
        held = acquire(on, "k");
        assertEquals(1, reads.get(), "the creation");
        current(on, "k");
        Handle<Object> again = acquire(on, "k");
        assertEquals(1, reads.get(), "acquires of an object in use read nothing");
        close(on, again);
        close(on, held);
        assertEquals(2, reads.get(), "count zero");
        on.close();
    }

    /** A ticker that throws: at creation the acquire fails with nothing made; at count 0 the object is kept. */
    @Test
    void aThrowingTickerLosesNoObjectAndNoCapacity() {
        AtomicInteger failing = new AtomicInteger();
        RefPool<String, Object> pool =
                build(builder().maxObjects(1).maxLifetime(LIFETIME).ticker(() -> {
                    if (failing.get() > 0) {
                        failing.decrementAndGet();
                        throw new IllegalStateException("clock gone");
                    }
                    return now.get();
                }));
        failing.set(1);
        assertThrows(IllegalStateException.class, () -> current(pool, "k"), "read before the factory");
        assertEquals(0, created.get());
        PoolError clock = errors.get(errors.size() - 1);
        assertEquals(PoolError.Kind.REVIVE_CHECK_FAILED, clock.kind(), "the ticker's failure, not the factory's");
        assertTrue(clock.message().contains("the ticker failed"), clock.message());
        Handle<Object> held = acquire(pool, "k"); // the one permit was given back
        Object kept = held.get();
        failing.set(1);
        close(pool, held); // count 0: the age cannot be read, the object is kept
        assertEquals(
                PoolError.Kind.REVIVE_CHECK_FAILED,
                errors.get(errors.size() - 1).kind());
        assertEquals(1, pool.stats().idle());
        assertSame(kept, current(pool, "k"));
        pool.close();
        assertEquals(1, disposed.size());
    }

    /** A validator that calls back into the pool: other keys work; its own key fails the check, never hangs. */
    @Test
    void aValidatorMayUseThePoolAndItsOwnKeyFailsTheCheck() {
        AtomicInteger checks = new AtomicInteger();
        java.util.concurrent.atomic.AtomicReference<RefPool<String, Object>> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        self.set(validated((key, value) -> {
            checks.incrementAndGet();
            if (key.equals("other")) {
                return true;
            }
            self.get().call("other", other -> other); // another key, nested attach
            return self.get().call(key, own -> own) != null; // its own key: would wait for itself
        }));
        RefPool<String, Object> pool = self.get();
        Object first = current(pool, "k");
        current(pool, "other");
        Object second = current(pool, "k");
        assertNotSame(first, second);
        assertEquals(DisposalCause.FAILED_VALIDATION, disposed.get(first));
        assertTrue(
                errors.stream()
                        .anyMatch(e -> e.cause() instanceof IllegalStateException
                                && e.cause().getMessage().contains("the validator acquired its own key")),
                errors.toString());
        pool.close();
    }

    @Test
    void badLifetimesAreRefusedAtTheCall() {
        RefPool.Builder<Object, Object> builder = RefPool.newBuilder();
        IllegalArgumentException zero =
                assertThrows(IllegalArgumentException.class, () -> builder.maxLifetime(Duration.ZERO));
        assertTrue(zero.getMessage().contains("maxLifetime"));
        assertThrows(IllegalArgumentException.class, () -> builder.maxLifetime(Duration.ofSeconds(-1)));
        assertThrows(NullPointerException.class, () -> builder.maxLifetime(null));
        assertThrows(NullPointerException.class, () -> builder.validator(null));
        assertThrows(NullPointerException.class, () -> builder.ticker(null));
    }
}
