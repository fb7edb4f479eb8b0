package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code Handle.share()} racing another thread's {@code close()} of the same handle, the close
 * forced between the share's open check and its reference: the object went idle, so the share
 * fails as on a closed handle and takes no reference, instead of reviving the object past its
 * revive check.
 */
class ShareRacingCloseTest {
    private final AtomicInteger checks = new AtomicInteger();

    /** A pool whose revive check counts. */
    private RefPool<String, Object> pool() {
        return RefPool.<String, Object>newBuilder()
                .attachMode(AttachMode.SHARED)
                .idle(cache -> cache.maximumSize(4))
                .drainDelay(Duration.ofHours(1)) // a deferred release stays pending: no drainer applies it
                .drainThreshold(1_000)
                .validator((String key, Object value) -> {
                    checks.incrementAndGet();
                    return true;
                })
                .build(key -> new Object());
    }

    /** Runs {@code share} on a new thread, closes {@code handle} while it is paused past its open check. */
    private static void shareLosingToClose(
            RefPool<String, Object> pool, Handle<Object> handle, Callable<Handle<Object>> share)
            throws InterruptedException {
        losingToClose(pool, handle, Point.SHARE_CHECKED, share);
    }

    /** Runs {@code use} on a new thread, closes {@code handle} while it is paused at {@code checked}. */
    private static void losingToClose(RefPool<String, Object> pool, Handle<Object> handle, Point point, Callable<?> use)
            throws InterruptedException {
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        TestPoolHooks.Pause checked = hooks.pause(point, null);
        Forked<Object> sharer = fork("user", use::call);
        checked.awaitArrival(); // the handle was open when share() looked
        pool.attached(() -> {
            handle.close(); // attached: the count reaches zero, the object goes idle
            return null;
        });
        checked.proceed();
        CompletionException failed = assertThrows(CompletionException.class, () -> sharer.outcome.join());
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        assertTrue(
                failed.getCause().getMessage().contains("closed meanwhile"),
                failed.getCause().getMessage());
    }

    @Test
    void aShareThatLosesToTheCloseFailsAndLeavesTheObjectIdle() throws Exception {
        RefPool<String, Object> pool = pool();
        Handle<Object> handle = pool.attached(() -> pool.acquire("k"));
        shareLosingToClose(pool, handle, () -> pool.attached(handle::share));
        assertEquals(0, pool.stats().live(), "the share holds nothing");
        assertEquals(1, pool.stats().idle());
        pool.call("k", value -> value);
        assertEquals(1, checks.get(), "the next acquire revived it through its check");
        pool.close();
    }

    /** Detached, a give-back would be deferred: the object must not be lendable unchecked meanwhile. */
    @Test
    void aDetachedShareThatLosesToTheCloseLendsNoUncheckedObject() throws Exception {
        RefPool<String, Object> pool = pool();
        Handle<Object> handle = pool.attached(() -> pool.acquire("k"));
        shareLosingToClose(pool, handle, handle::share);
        Handle<Object> again = pool.acquireAsync("k", CancellationToken.none())
                .toCompletableFuture()
                .join(); // never attaches: applies no pending release
        try {
            assertEquals(1, checks.get(), "the idle object was lent without its revive check");
        } finally {
            again.close();
            pool.close();
        }
    }

    /** {@code Handle.section()} takes a reference of its own as share() does, and loses the same way. */
    @Test
    void aSectionThatLosesToTheCloseFailsAndLeavesTheObjectIdle() throws Exception {
        RefPool<String, Object> pool = pool();
        Handle<Object> handle = pool.attached(() -> pool.acquire("k"));
        losingToClose(
                pool,
                handle,
                Point.SECTION_CHECKED,
                () -> pool.attached(() -> {
                    try (io.refpool.sync.Guard section = handle.section()) {
                        return section;
                    }
                }));
        assertEquals(0, pool.stats().live(), "the section holds nothing");
        assertEquals(1, pool.stats().idle());
        pool.call("k", value -> value);
        assertEquals(1, checks.get(), "the next acquire revived it through its check");
        pool.close();
    }
}
