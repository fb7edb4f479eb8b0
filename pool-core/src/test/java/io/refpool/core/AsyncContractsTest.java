package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * One failure shape for the async calls (every failure through the stage, only a null argument
 * throws; a cancellation reads as cancelled, anything else as a failure), and a token cancelled
 * before the call fails attach, attachAsync and acquireAsync alike, whether or not the gate or the
 * object is free.
 */
class AsyncContractsTest {
    private final TestResources resources = new TestResources();

    private static Throwable failureOf(CompletionStage<?> stage) {
        return TestKit.joinedFailure(stage);
    }

    @Test
    void anAlreadyCancelledTokenFailsEveryFormEvenWithEverythingFree() {
        RefPool<String, Resource> pool = resources.pool(AttachMode.SHARED);
        pool.attached(() -> {
            pool.acquire("k").close(); // "k" exists: an acquire would not need to wait
            return null;
        });
        CancellationSource source = new CancellationSource();
        source.cancel();
        CancellationToken cancelled = source.token();

        assertThrows(CancellationException.class, () -> pool.attach(cancelled), "attach, the gate free");
        assertFalse(pool.isAttached());
        TestKit.joinedCancellation(pool.acquireAsync("k", cancelled));
        TestKit.joinedCancellation(pool.attachAsync(cancelled, a -> "ran"));
        TestKit.joinedCancellation(pool.callAsync("k", cancelled, r -> "ran"));
        try (Attachment attached = pool.attach()) {
            assertThrows(CancellationException.class, () -> pool.attach(cancelled), "nested, too");
        }
        assertEquals(0, pool.stats().live(), "no reference was taken by the refused calls");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void asyncCallsOnAClosedPoolFailTheirStageAndNeverThrow() {
        RefPool<String, Resource> pool = resources.pool(AttachMode.SHARED);
        pool.close();
        assertInstanceOf(PoolClosedException.class, failureOf(pool.acquireAsync("k", CancellationToken.none())));
        assertInstanceOf(PoolClosedException.class, failureOf(pool.attachAsync(CancellationToken.none(), a -> 1)));
        assertInstanceOf(PoolClosedException.class, failureOf(pool.callAsync("k", CancellationToken.none(), r -> 1)));
        assertThrows(NullPointerException.class, () -> pool.acquireAsync(null, CancellationToken.none()));
    }

    /**
     * A granted attachAsync applies the releases pending before its function runs; a caller that
     * gives up meanwhile (here from a disposer that grant runs) is told its cancel took, so the
     * function must not run. The holder's way out applies "a", whose disposer leaves "b" pending;
     * the grant, on the holder's thread, applies "b", whose disposer cancels the stage.
     */
    @Test
    void anAttachAsyncCancelledWhileItsGrantAppliesPendingReleasesNeverRuns() throws Exception {
        RefPool<String, Resource> pool = resources.build(
                resources.builder().attachMode(AttachMode.GLOBAL).drainDelay(java.time.Duration.ofHours(1)));
        Handle<Resource> a = pool.attached(() -> pool.acquire("a"));
        Handle<Resource> b = pool.attached(() -> pool.acquire("b"));
        java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CompletableFuture<String>> waiting =
                new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean cancelTook = new java.util.concurrent.atomic.AtomicBoolean();
        resources.alsoOnDispose(resource -> {
            if (resource.key.equals("a")) {
                try {
                    TestKit.forkRun("closer of b", b::close).join(); // pending again, after the holder took "a"
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            } else if (resource.key.equals("b")) {
                cancelTook.set(waiting.get().cancel(false));
            }
        });
        java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
        try (Attachment holder = pool.attach()) {
            waiting.set(pool.attachAsync(CancellationToken.none(), attached -> {
                        ran.incrementAndGet();
                        return "ran";
                    })
                    .toCompletableFuture());
            TestKit.forkRun("closer of a", a::close).join(); // pending
        } // applies "a"; the gate goes to the waiter, whose grant applies "b"
        assertEquals(true, cancelTook.get(), "the cancel took: the function had not started");
        TestKit.joinedCancellation(waiting.get());
        assertEquals(0, ran.get(), "fn never runs once its caller gave up");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(AttachMode.class)
    void anAttachAsyncItsCallerCancelsWhileItWaitsNeverRunsAndKeepsNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = resources.pool(mode);
        java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CompletableFuture<Handle<Resource>> waiting;
        try (Attachment world = pool.stopTheWorld()) {
            waiting = pool.attachAsync(CancellationToken.none(), attached -> {
                        ran.incrementAndGet();
                        return pool.acquire("k");
                    })
                    .toCompletableFuture();
            assertEquals(true, waiting.cancel(false), "still waiting for the gate");
        }
        try (Attachment attached = pool.attach()) {
            pool.flush();
        }
        assertEquals(0, ran.get(), "fn never runs once its caller gave up");
        assertEquals(0, pool.stats().live(), "no reference kept");
        TestKit.fork("gate-check", () -> {
                    pool.stopTheWorld(java.time.Duration.ofSeconds(5)).close();
                    return null;
                })
                .join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
