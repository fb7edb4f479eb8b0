package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit;
import java.io.IOException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Contracts of the newer surfaces that held only on the common path: one key named twice in a
 * two-key call, live objects counted while invalidated, attachments a closure ended, waits of
 * unbounded length, cancelled tokens on a free section, and messages that name the pool, the key
 * and the cause.
 */
class SurfaceContractsTest {
    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(resources.builder().name("tenants").attachMode(mode));
    }

    private static Throwable failureOf(CompletableFuture<?> future) throws Exception {
        Throwable failure = future.handle((value, t) -> t).get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertTrue(failure != null, "the future succeeded: " + future);
        return failure instanceof CompletionException ? failure.getCause() : failure;
    }

    /**
     * A key that holds the calling thread in its {@code hashCode} at a chosen call, so a test can act
     * between two lookups of one operation.
     */
    static final class PausingKey {
        final String name;
        final Thread pausedThread;
        final int pauseAtCall;
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch paused = new CountDownLatch(1);
        final CountDownLatch proceed = new CountDownLatch(1);
        volatile boolean armed;

        PausingKey(String name, Thread pausedThread, int pauseAtCall) {
            this.name = name;
            this.pausedThread = pausedThread;
            this.pauseAtCall = pauseAtCall;
        }

        @Override
        public int hashCode() {
            if (armed && Thread.currentThread() == pausedThread && calls.incrementAndGet() == pauseAtCall) {
                paused.countDown();
                TestKeyedPoolFixtures.awaitLatch(proceed);
            }
            return name.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof PausingKey && ((PausingKey) other).name.equals(name);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    // ---------------------------------------------------------------- call(k, k) and invalidate

    /** In {@code GLOBAL} mode an invalidate cannot race a call: it waits for the gate the call holds. */
    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void aTwoKeyCallNamingOneKeyTwiceLendsOneObjectWhileInvalidateRaces(AttachMode mode) throws Exception {
        RefPool<PausingKey, Object> pool = RefPool.builder((PausingKey key) -> new Object())
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(10))
                .build();
        AtomicReference<PausingKey> key = new AtomicReference<>();
        TestKit.Forked<Boolean> caller = fork("caller", () -> {
            PausingKey k = new PausingKey("k", Thread.currentThread(), 2);
            pool.call(k, x -> x); // created, then idle: the call below revives it with one lookup
            k.armed = true;
            key.set(k);
            return pool.<Boolean, RuntimeException>call(k, k, (a, b) -> a == b); // a second lookup of k would pause
        });
        TestKit.eventually().until(() -> key.get() != null);
        PausingKey k = key.get();
        TestKit.eventually().until(() -> k.paused.getCount() == 0 || !caller.thread.isAlive());
        if (k.paused.getCount() == 0) { // between two acquires of one key: retire the object the first one got
            pool.invalidate(new PausingKey("k", null, 0));
            k.proceed.countDown();
        }
        assertTrue(caller.join(), "one key named twice is one object");
        pool.close();
    }

    // ---------------------------------------------------------------- stats

    @Test
    void anInvalidatedObjectStillHeldCountsAsLive() {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        Handle<Resource> held = pool.attached(() -> pool.acquire("a"));
        assertTrue(pool.invalidate("a"));
        assertEquals(1, pool.stats().live(), "it holds a permit and is in use");
        Handle<Resource> successor = pool.attached(() -> pool.acquire("a"));
        assertEquals(2, pool.stats().live(), "the invalidated object and its successor");
        pool.attached(() -> {
            held.close();
            successor.close();
            return null;
        });
        assertEquals(0, pool.stats().live());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    // ---------------------------------------------------------------- attachments ended by a closure

    @Test
    void anAttachmentThatEndedWithItsClosureCannotCloseAnotherAttachmentsLevel() {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        Attachment leaked = pool.attached(pool::attach); // left open: it ends with the closure
        try (Attachment outer = pool.attach();
                Attachment inner = pool.attach()) { // the level the leaked one had
            IllegalStateException refused = assertThrows(IllegalStateException.class, leaked::close);
            assertTrue(refused.getMessage().contains("already closed"), refused.getMessage());
            assertTrue(pool.isAttached());
            assertSame(inner, inner); // still open: its own close below succeeds
        }
        assertFalse(pool.isAttached());
        Attachment leakedInCall = pool.call("a", a -> pool.attach());
        try (Attachment outer = pool.attach();
                Attachment inner = pool.attach()) {
            assertThrows(IllegalStateException.class, leakedInCall::close);
        }
        assertFalse(pool.isAttached());
        pool.close();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachmentClosedTwiceThrowsAndLeavesTheOneOpenAtItsLevelSince(AttachMode mode) {
        RefPool<String, Resource> pool = pool(mode);
        try (Attachment outer = pool.attach()) {
            for (int round = 0; round < 3; round++) { // the level's scope objects are reused in turn
                Attachment stale = pool.attach();
                stale.close();
                try (Attachment again = pool.attach()) { // the level the stale one had
                    assertThrows(IllegalStateException.class, stale::close);
                    Attachment inner = pool.attach();
                    inner.close(); // the depth is still two: closing the innermost works
                }
                assertTrue(pool.isAttached());
                try (Attachment sibling = pool.attach()) {
                    assertTrue(pool.isAttached());
                }
            }
        }
        assertFalse(pool.isAttached());
        pool.close();
    }

    // ---------------------------------------------------------------- waits of unbounded length

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDurationTooLongForNanosecondsWaitsWithoutLimitAndLosesNothing(AttachMode mode) throws Exception {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        RefPool<String, Resource> pool = resources.build(
                resources.builder().name("tenants").attachMode(mode).maxObjects(1));
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        CompletableFuture<Handle<Resource>> waiting =
                pool.acquireAsync("b", forever).toCompletableFuture(); // must wait: no capacity
        assertFalse(waiting.isDone(), "waits for capacity");
        pool.attached(() -> {
            a.close(); // frees the permit
            return null;
        });
        Handle<Resource> b = waiting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals("b", b.key());
        pool.attached(() -> {
            try (Guard section = b.section(forever)) {
                return b.get();
            }
        });
        try (Attachment attached = pool.attach(forever)) {
            assertTrue(pool.isAttached());
        }
        pool.attached(() -> {
            b.close();
            return null;
        });
        pool.close();
        resources.assertAllDisposedOnceAttached();
        assertEquals(2, resources.disposalCount(), "no object orphaned: close disposed both");
    }

    // ---------------------------------------------------------------- sections: refusals

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCancelledTokenFailsHandleExclusiveEvenWhenTheSectionIsFree(AttachMode mode) {
        RefPool<String, Resource> pool = pool(mode);
        CancellationSource cancelled = new CancellationSource();
        cancelled.cancel();
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        CancellationException refused =
                assertThrows(CancellationException.class, () -> pool.attached(() -> a.section(cancelled.token())));
        assertTrue(refused.getMessage().contains("'a'"), refused.getMessage());
        assertTrue(refused.getMessage().contains("'tenants'"), refused.getMessage());
        pool.attached(() -> {
            try (Guard free = a.section()) { // nothing was held by the refused call
                return null;
            }
        });
        pool.attached(() -> {
            a.close();
            return null;
        });
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void handleExclusiveOnAnUnattachedThreadIsRefusedUntilThePoolCloses() {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .name("tenants")
                .attachMode(AttachMode.PER_OBJECT)
                .strictAccess(true));
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        IllegalStateException refused = assertThrows(IllegalStateException.class, a::section);
        assertTrue(refused.getMessage().contains("not attached"), refused.getMessage());
        assertTrue(refused.getMessage().contains("'tenants'"), refused.getMessage());
        assertThrows(IllegalStateException.class, () -> a.section(Duration.ofSeconds(1)));
        assertThrows(IllegalStateException.class, () -> a.section(CancellationToken.none()));

        pool.close(); // "a" is still held: it stays usable, in its section, though nobody can attach
        try (Guard section = a.section()) {
            assertSame(resources.created("a"), a.get());
        }
        IllegalStateException outside = assertThrows(IllegalStateException.class, a::get);
        assertTrue(outside.getMessage().contains("section"), outside.getMessage());
        a.close();
        TestKit.eventually().until(() -> resources.disposalCount() == 1); // by the drainer, attached
        assertTrue(resources.created("a").disposedAttached);
    }

    @Test
    void strictAccessRefusalsNameThePool() {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .name("tenants")
                .attachMode(AttachMode.PER_OBJECT)
                .strictAccess(true));
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        IllegalStateException unattached = assertThrows(IllegalStateException.class, a::get);
        assertTrue(unattached.getMessage().contains("pool 'tenants'"), unattached.getMessage());
        IllegalStateException outside = assertThrows(IllegalStateException.class, () -> pool.attached(a::get));
        assertTrue(outside.getMessage().contains("pool 'tenants'"), outside.getMessage());
        pool.attached(() -> {
            a.close();
            return null;
        });
        pool.close();
    }

    // ---------------------------------------------------------------- messages

    @Test
    void aCancelledCapacityWaitNamesTheKeyAndThePoolNotTheLockUnderneath() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .name("tenants")
                .attachMode(AttachMode.SHARED)
                .maxObjects(1));
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        CancellationSource source = new CancellationSource();
        CompletableFuture<Handle<Resource>> waiting =
                pool.acquireAsync("b", source.token()).toCompletableFuture();
        source.cancel();
        Throwable failure = failureOf(waiting);
        assertInstanceOf(CancellationException.class, failure);
        assertTrue(failure.getMessage().contains("'b'"), failure.getMessage());
        assertTrue(failure.getMessage().contains("pool 'tenants'"), failure.getMessage());
        assertFalse(failure.getMessage().contains("AsyncSemaphore"), failure.getMessage());
        pool.attached(() -> {
            a.close();
            return null;
        });
        pool.close();
    }

    @Test
    void factoryAndDisposerFailuresNameTheirCause() throws Exception {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        AtomicBoolean failDisposal = new AtomicBoolean(true);
        RefPool<String, Object> pool = RefPool.builder((String key) -> {
                    if (key.equals("broken")) {
                        throw new IOException("the tenant's script did not compile");
                    }
                    return new Object();
                })
                .name("tenants")
                .disposer((key, value, cause) -> {
                    if (failDisposal.get()) {
                        throw new IllegalStateException("the context refused to close");
                    }
                })
                .errorListener(errors::add)
                .build();
        ObjectCreationException created =
                assertThrows(ObjectCreationException.class, () -> pool.call("broken", x -> x));
        assertTrue(created.getMessage().contains("the tenant's script did not compile"), created.getMessage());
        assertTrue(created.getMessage().contains("pool 'tenants'"), created.getMessage());
        pool.call("a", x -> x); // no idle cache: disposed at once
        assertTrue(
                errors.stream()
                        .anyMatch(e -> e.kind() == PoolError.Kind.FACTORY_FAILED
                                && e.message().contains("the tenant's script did not compile")),
                errors.toString());
        assertTrue(
                errors.stream()
                        .anyMatch(e -> e.kind() == PoolError.Kind.DISPOSER_FAILED
                                && e.message().contains("the context refused to close")),
                errors.toString());
        pool.close();
    }
}
