package io.refpool.core;

import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

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
}
