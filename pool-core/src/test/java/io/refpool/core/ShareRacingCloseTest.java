package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code Handle.share()} racing another thread's {@code close()} of the same handle, the close
 * forced between the share's open check and its reference: the object went idle, so the share
 * fails as on a closed handle and gives its reference back, instead of reviving the object past
 * its revive check.
 */
class ShareRacingCloseTest {
    @Test
    void aShareThatLosesToTheCloseFailsAndLeavesTheObjectIdle() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .attachMode(AttachMode.SHARED)
                .idle(cache -> cache.maximumSize(4))
                .validator((String key, Object value) -> {
                    checks.incrementAndGet();
                    return true;
                })
                .build(key -> new Object());
        Handle<Object> handle = pool.attached(() -> pool.acquire("k"));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestPoolHooks.Pause checked = hooks.pause(Point.SHARE_CHECKED, null);

        Forked<Handle<Object>> sharer = fork("sharer", () -> pool.attached(handle::share));
        checked.awaitArrival(); // the handle was open when share() looked
        pool.attached(() -> {
            handle.close(); // attached: the count reaches zero, the object goes idle
            return null;
        });
        checked.proceed();

        CompletionException failed =
                org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, () -> sharer.outcome.join());
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        assertTrue(
                failed.getCause().getMessage().contains("closed meanwhile"),
                failed.getCause().getMessage());
        assertEquals(0, pool.stats().live(), "the share's reference was given back");
        assertEquals(1, pool.stats().idle());
        pool.call("k", value -> value);
        assertEquals(1, checks.get(), "the next acquire revived it through its check");
        pool.close();
    }
}
