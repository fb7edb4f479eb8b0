package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code Handle.share()} on a detached thread losing to an attached close: the share's +1 revives
 * the idle object from zero, and its give-back is deferred (detached), so the object stays live at
 * count 1 with no holder until a drain. An acquireAsync meanwhile shares it without its revive check.
 */
class DetachedShareRacingCloseTest {
    @Test
    void aDetachedShareThatLosesToTheCloseLendsNoUncheckedObject() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .attachMode(AttachMode.SHARED)
                .idle(cache -> cache.maximumSize(4))
                .drainDelay(Duration.ofHours(1))
                .drainThreshold(1_000)
                .validator((String key, Object value) -> {
                    checks.incrementAndGet();
                    return true;
                })
                .build(key -> new Object());
        Handle<Object> handle = pool.attached(() -> pool.acquire("k"));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestPoolHooks.Pause checked = hooks.pause(Point.SHARE_CHECKED, null);

        Forked<Handle<Object>> sharer = fork("sharer", handle::share); // detached
        checked.awaitArrival();
        pool.attached(() -> {
            handle.close(); // the object goes idle
            return null;
        });
        checked.proceed();
        CompletionException failed = assertThrows(CompletionException.class, () -> sharer.outcome.join());
        assertInstanceOf(IllegalStateException.class, failed.getCause());

        // a detached acquire: the object went idle, so it must be revived through its check
        Handle<Object> again = pool.acquireAsync("k", io.refpool.sync.CancellationToken.none())
                .toCompletableFuture()
                .join();
        try {
            assertEquals(1, checks.get(), "the idle object was lent without its revive check");
        } finally {
            again.close();
            pool.close();
        }
    }
}
