package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A closed pool is not kept reachable by a delay it armed: the idle cache's expiry, the drain
 * timer. A plugin host that reloads a plugin builds and closes pools, and each would otherwise keep
 * its factory and disposer (and through them the plugin's class loader) for the expiry or the
 * drain delay.
 */
class ClosedPoolKeptByNoTimerTest {
    /** Builds a pool whose idle cache expires objects, idles one, closes; weak references to what must go. */
    private static List<WeakReference<?>> closedPoolWithAnExpiringIdleCache() {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .disposer(sb -> sb.setLength(0))
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .build();
        StringBuilder object;
        try (Attachment attached = pool.attach();
                Handle<StringBuilder> h = pool.acquire("tenant-7")) {
            object = h.get();
        } // count 0: idle; the cache schedules its expiry
        pool.close();
        return List.of(new WeakReference<>(pool.core()), new WeakReference<>(object));
    }

    /** Builds a pool with an hour's drain delay, queues a release (arming the timer), closes. */
    private static List<WeakReference<?>> closedPoolWithALongDrainDelay() {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .drainDelay(Duration.ofHours(1))
                .build();
        Handle<StringBuilder> h;
        try (Attachment attached = pool.attach()) {
            h = pool.acquire("tenant-7");
        }
        h.close(); // detached: a pending release, which arms the drain timer
        pool.close(); // applies it
        return List.of(new WeakReference<>(pool.core()));
    }

    private static void awaitCollected(List<WeakReference<?>> refs) {
        eventually().until(() -> {
            System.gc();
            return refs.stream().allMatch(r -> r.get() == null);
        });
    }

    @Test
    void aClosedPoolWithAnExpiringIdleCacheIsCollected() {
        awaitCollected(closedPoolWithAnExpiringIdleCache());
    }

    @Test
    void aClosedPoolWithALongDrainDelayIsCollected() {
        awaitCollected(closedPoolWithALongDrainDelay());
    }
}
