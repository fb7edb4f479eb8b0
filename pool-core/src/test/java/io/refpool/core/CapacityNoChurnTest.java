package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Capacity without churn: a waiter in line for capacity is served by sharing its key's object as
 * soon as the key has one, and an object reaching count 0 goes to a waiter for its own key before
 * anyone disposes it. Each case is forced (latches and the pool's test hooks) and checked with
 * exact creation and disposal counts; the comment on each assertion says what the count was before.
 */
class CapacityNoChurnTest {
    private static CompletableFuture<Handle<Session>> acquireAsync(RefPool<String, Session> pool, String key) {
        return pool.acquireAsync(key, CancellationToken.none()).toCompletableFuture();
    }

    private static TestPoolHooks hooks(RefPool<?, ?> pool) {
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        return hooks;
    }

    private static Handle<Session> joinWithin(CompletableFuture<Handle<Session>> future) throws Exception {
        return future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
    }

    /** Two waiters for one key: the first creates it with its permit, the second shares at once. */
    @Test
    void aWaiterIsServedBySharingItsKeyOnceAnotherWaiterCreatedIt() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(1));
        Handle<Session> a;
        try (Attachment attached = pool.attach()) {
            a = pool.acquire("a");
        }
        List<String> served = new CopyOnWriteArrayList<>();
        CompletableFuture<Handle<Session>> k1 = acquireAsync(pool, "k").whenComplete((h, f) -> served.add("k1"));
        CompletableFuture<Handle<Session>> m = acquireAsync(pool, "m").whenComplete((h, f) -> served.add("m"));
        CompletableFuture<Handle<Session>> k2 = acquireAsync(pool, "k").whenComplete((h, f) -> served.add("k2"));
        assertEquals(3, pool.stats().capacityWaiters());

        try (Attachment attached = pool.attach()) {
            a.close(); // disposed for the line: its permit goes to the head waiter, which creates "k"
        }
        // "k2" shares the new object and leaves the line ahead of "m", needing no permit (before:
        // it waited for a permit of its own, behind "m", while "k" was live)
        assertEquals(List.of("k1", "k2"), served);
        assertSame(joinWithin(k1).get(), joinWithin(k2).get());
        assertEquals(1, pool.stats().capacityWaiters(), "only 'm' still needs a permit");
        assertEquals(2, engine.created.size());
        assertEquals(1, engine.disposed.size());

        try (Attachment attached = pool.attach()) {
            joinWithin(k1).close();
            assertFalse(m.isDone(), "'k' is still held by the second waiter");
            joinWithin(k2).close(); // count 0 with "m" in line and no waiter for "k": disposed for "m"
        }
        assertEquals(List.of("k1", "k2", "m"), served);
        try (Attachment attached = pool.attach()) {
            joinWithin(m).close();
        }
        assertEquals(3, engine.created.size());
        assertEquals(3, engine.disposed.size());
        CapacityTest.assertAllPermitsFree(pool, 1);
        pool.close();
        assertEquals(List.of(), engine.violations);
    }

    /**
     * A pool full at {@code maxObjects(2)} with "a" held and "x" idle-to-be, and an
     * {@code acquireAsync("k")} held just before it joins the line: its attempt found no "k" and no
     * capacity. Then this thread idles "x" (nobody is counted in line yet) and creates "k" with x's
     * permit, while the waiter still has not joined.
     */
    private static final class JoinRace {
        final Engine engine = new Engine();
        final RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(2).idle(cache -> cache.executor(Runnable::run)));
        final TestPoolHooks hooks = hooks(pool);
        final AtomicReference<CompletableFuture<Handle<Session>>> waiting = new AtomicReference<>();
        final Forked<Void> waiter = unstartedRun("waiter", () -> waiting.set(acquireAsync(pool, "k")));
        final TestPoolHooks.Pause joining = hooks.pause(Point.CAPACITY_JOINING, waiter.thread);
        Handle<Session> a;
        Handle<Session> k;

        /** Starts the waiter, holds it before it joins, and creates "k" meanwhile. */
        JoinRace createKeyWhileTheWaiterJoins() throws Exception {
            Handle<Session> x;
            try (Attachment attached = pool.attach()) {
                a = pool.acquire("a");
                x = pool.acquire("x");
            }
            waiter.start();
            joining.awaitArrival();
            try (Attachment attached = pool.attach()) {
                x.close(); // nobody counted in line yet: "x" idles
                k = pool.acquire("k"); // reclaims idle "x" for its permit and creates "k"; nobody to serve
            }
            return this;
        }
    }

    /**
     * A waiter about to join the line while another thread creates its key: joining, it looks at
     * its key again and shares the object (before: it waited for a permit while its key was live).
     */
    @Test
    void aWaiterThatJoinsJustAfterItsKeyWasCreatedSharesIt() throws Exception {
        JoinRace race = new JoinRace().createKeyWhileTheWaiterJoins();
        race.joining.proceed();
        race.waiter.join();
        Handle<Session> shared = joinWithin(race.waiting.get());
        assertSame(race.k.get(), shared.get());
        assertEquals(0, race.pool.stats().capacityWaiters());
        assertEquals(3, race.engine.created.size(), "a, x, k");
        assertEquals(1, race.engine.disposed.size(), "x");
        try (Attachment attached = race.pool.attach()) {
            race.k.close();
            shared.close();
            race.a.close();
        }
        assertEquals(3, race.engine.created.size(), "nobody created 'k' again");
        race.pool.close();
        assertEquals(3, race.engine.disposed.size());
        assertEquals(List.of(), race.engine.violations);
    }

    /**
     * An object reaching count 0 while a waiter for its own key is in line goes to that waiter,
     * revived (before: disposed for the line, its permit granted to the waiter, which created the
     * key again: 4 creations and 2 disposals instead of 3 and 1).
     */
    @Test
    void anObjectReachingZeroGoesToAWaiterForItsOwnKeyBeforeItIsDisposed() throws Exception {
        JoinRace race = new JoinRace();
        TestPoolHooks.Pause queued = race.hooks.pause(Point.CAPACITY_QUEUED, race.waiter.thread);
        race.createKeyWhileTheWaiterJoins();
        race.joining.proceed();
        queued.awaitArrival(); // in line and counted, not yet looking at "k" again
        Session kObject = race.k.get();
        try (Attachment attached = race.pool.attach()) {
            race.k.close(); // count 0 with a waiter for "k" in line: revived for it, not disposed
        }
        assertEquals(0, race.pool.stats().capacityWaiters(), "served by the release, on the releasing thread");
        assertEquals(1, race.engine.disposed.size(), "only x: 'k' was not disposed for the line");
        queued.proceed();
        race.waiter.join();
        Handle<Session> served = joinWithin(race.waiting.get());
        assertSame(kObject, served.get());
        assertEquals(3, race.engine.created.size(), "a, x, k");
        assertEquals(1, race.engine.disposed.size(), "x");
        assertEquals(1, race.pool.stats().idleHits(), "the waiter revived 'k'");
        try (Attachment attached = race.pool.attach()) {
            served.close();
            race.a.close();
        }
        race.pool.close();
        assertEquals(3, race.engine.created.size());
        assertEquals(3, race.engine.disposed.size());
        assertEquals(List.of(), race.engine.violations);
    }

    /** Waiters that need a permit keep their FIFO order around the waiters served by sharing. */
    @Test
    void permitsStayFifoAmongWaitersThatNeedOne() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(engine.builder().maxObjects(2));
        Handle<Session> a;
        Handle<Session> b;
        try (Attachment attached = pool.attach()) {
            a = pool.acquire("a");
            b = pool.acquire("b");
        }
        List<String> served = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Handle<Session>>> waiters = new ArrayList<>();
        for (String key : List.of("c", "d", "c", "e", "d")) {
            int place = waiters.size();
            waiters.add(acquireAsync(pool, key).whenComplete((h, f) -> served.add(key + place)));
        }
        try (Attachment attached = pool.attach()) {
            a.close(); // "c" created for the head waiter; the third waiter shares it
        }
        assertEquals(List.of("c0", "c2"), served);
        try (Attachment attached = pool.attach()) {
            b.close(); // "d" created for the second waiter; the fifth shares it
        }
        assertEquals(List.of("c0", "c2", "d1", "d4"), served);
        assertEquals(1, pool.stats().capacityWaiters(), "only 'e' needs a permit");
        try (Attachment attached = pool.attach()) {
            waiters.get(0).join().close();
            waiters.get(2).join().close(); // "c" at 0 with only "e" in line: disposed for it
        }
        assertEquals(List.of("c0", "c2", "d1", "d4", "e3"), served);
        assertEquals(5, engine.created.size(), "a, b, c, d, e: one creation per key");
        try (Attachment attached = pool.attach()) {
            for (int i : new int[] {1, 3, 4}) {
                waiters.get(i).join().close();
            }
        }
        CapacityTest.assertAllPermitsFree(pool, 2);
        pool.close();
        assertEquals(List.of(), engine.violations);
    }
}
