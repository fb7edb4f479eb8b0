package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A waiter in line for capacity in a checked pool whose key throws from {@code hashCode} once, as
 * the waiter revives its own key's idle object: the idle objects are still reclaimed for the line,
 * so the waiter is served. Before, the failure skipped the reclaim, and the waiter waited while an
 * idle object held the permit it needed.
 */
class KeyFaultWhileInLineTest {
    /** A key whose {@code hashCode} throws once, at the {@code throwIn}-th call once armed. */
    static final class Key {
        final String name;
        volatile int throwIn;
        volatile boolean threw;

        Key(String name) {
            this.name = name;
        }

        @Override
        public int hashCode() {
            if (throwIn > 0 && --throwIn == 0) {
                threw = true;
                throw new IllegalStateException("hashCode of " + name);
            }
            return name.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Key && ((Key) other).name.equals(name);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    @Test
    void aKeyThrowingWhileItsWaiterRevivesItsIdleObjectLeavesNoWaiterStuck() throws Exception {
        Key a = new Key("a");
        Key x = new Key("x");
        Key k = new Key("k");
        RefPool<Key, Object> pool = RefPool.<Key, Object>builder(key -> new Object())
                .maxObjects(2)
                .validator((Key key, Object value) -> true)
                .idle(cache -> cache.executor(Runnable::run))
                .build();
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        Handle<Object> heldA = pool.attached(() -> pool.acquire(a));
        Handle<Object> heldX = pool.attached(() -> pool.acquire(x));
        AtomicReference<CompletableFuture<Handle<Object>>> waiting = new AtomicReference<>();
        Forked<Void> waiter = unstartedRun(
                "waiter",
                () -> waiting.set(pool.acquireAsync(k, CancellationToken.none()).toCompletableFuture()));
        TestPoolHooks.Pause joining = hooks.pause(Point.CAPACITY_JOINING, waiter.thread);
        TestPoolHooks.Pause queued = hooks.pause(Point.CAPACITY_QUEUED, waiter.thread);
        waiter.start();
        joining.awaitArrival(); // no k, no permit: it joins the line
        pool.runAttached(() -> {
            heldX.close();
            pool.acquire(k).close(); // x reclaimed for k, which idles: nobody is counted in line yet
        });
        joining.proceed();
        queued.awaitArrival(); // counted; k is idle and holds the permit
        k.throwIn = 2; // its look at k passes, its revive of k throws
        queued.proceed();
        waiter.join();

        Handle<Object> served = waiting.get().get(10, TimeUnit.SECONDS); // "a" still held
        assertTrue(k.threw, "the key threw in the revive");
        pool.runAttached(served::close);
        pool.runAttached(heldA::close);
        CapacityTest.assertAllPermitsFree(pool, 2, i -> new Key("probe-" + i));
        pool.close();
        assertEquals(0, pool.stats().live() + pool.stats().idle());
    }

    /** Throws from {@code hashCode} once, armed, when the line looks the key's live object up. */
    static final class KeyThrowingAtItsLook {
        final String name;
        final AtomicBoolean armed = new AtomicBoolean();

        KeyThrowingAtItsLook(String name) {
            this.name = name;
        }

        @Override
        public int hashCode() {
            if (armed.get()
                    && StackWalker.getInstance()
                            .walk(frames -> frames.anyMatch(
                                    frame -> frame.getClassName().startsWith("io.refpool.core.internal.Acquirer$")
                                            && frame.getMethodName().equals("current")))
                    && armed.compareAndSet(true, false)) {
                throw new IllegalStateException("hashCode of " + name + " as the line looks it up");
            }
            return name.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof KeyThrowingAtItsLook && ((KeyThrowingAtItsLook) other).name.equals(name);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * The permit frees between a waiter's attempt, which found none, and its joining the line, so
     * its permit wait is granted at once and makes "b" for it; then the key throws at the line's
     * look for a live "b". Before, the throw failed the stage and dropped the reference the grant
     * had made: "b" was never disposed, and its permit was lost.
     */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aKeyThrowingAtTheLinesLookAfterItsWaitWasGrantedLosesNothing(AttachMode mode) throws Exception {
        List<Object> created = new CopyOnWriteArrayList<>();
        Map<Object, Integer> disposals = new ConcurrentHashMap<>();
        RefPool<KeyThrowingAtItsLook, Object> pool = RefPool.<KeyThrowingAtItsLook, Object>builder(key -> {
                    Object made = new Object();
                    created.add(made);
                    return made;
                })
                .disposer((Object value) -> disposals.merge(value, 1, Integer::sum))
                .attachMode(mode)
                .maxObjects(1)
                .build();
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        KeyThrowingAtItsLook b = new KeyThrowingAtItsLook("b");
        Handle<Object> held = pool.attached(() -> pool.acquire(new KeyThrowingAtItsLook("a"))); // the one permit
        AtomicReference<CompletableFuture<Handle<Object>>> waiting = new AtomicReference<>();
        Forked<Void> waiter = unstartedRun(
                "waiter",
                () -> waiting.set(pool.acquireAsync(b, CancellationToken.none()).toCompletableFuture()));
        TestPoolHooks.Pause joining = hooks.pause(Point.CAPACITY_JOINING, waiter.thread);
        b.armed.set(true);
        waiter.start();
        joining.awaitArrival(); // its attempt found no permit; it has not joined the line
        pool.runAttached(held::close); // nobody in line: "a" is disposed, its permit free
        joining.proceed();
        waiter.join();
        assertFalse(b.armed.get(), "the key threw at the look");
        pool.runAttached(waiting.get().get(BOUND.toSeconds(), TimeUnit.SECONDS)::close); // served all the same
        pool.flush();
        assertEquals(0, pool.stats().live(), pool.stats().toString());
        CapacityTest.assertAllPermitsFree(pool, 1, i -> new KeyThrowingAtItsLook("probe-" + i));
        pool.close();
        for (Object made : created) {
            assertEquals(1, disposals.get(made), "every object disposed once: " + disposals);
        }
    }
}
