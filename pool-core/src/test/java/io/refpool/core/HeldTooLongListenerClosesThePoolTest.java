package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * An error listener told of a call running too long may close the pool, on the thread of the
 * periodic check, which every pool with a threshold shares: the close waits for that very call, so
 * it must not wait there, or no pool's hold would be checked again until the call returned.
 */
class HeldTooLongListenerClosesThePoolTest {
    private final TestResources resources = new TestResources();

    @Test
    void aListenerThatClosesThePoolReturnsAndTheOtherPoolsAreStillChecked() throws Exception {
        AtomicReference<RefPool<String, Resource>> self = new AtomicReference<>();
        CountDownLatch closeReturned = new CountDownLatch(1);
        RefPool<String, Resource> watched = resources.build(resources
                .builder()
                .name("closes-itself")
                .heldTooLong(Duration.ofMillis(1))
                .errorListener(error -> {
                    resources.errors.add(error);
                    if (error.kind() == PoolError.Kind.HELD_TOO_LONG) {
                        self.get().close();
                        closeReturned.countDown();
                    }
                }));
        self.set(watched);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Thread caller = new Thread(() -> {
            try {
                watched.run("a", object -> {
                    running.countDown();
                    finish.await();
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        caller.start();
        try {
            assertTrue(running.await(10, TimeUnit.SECONDS));
            closedByItsListenerWhileTheCallRuns(watched, closeReturned);
        } finally {
            finish.countDown(); // the close started by the listener finishes when the call returns
            caller.join(TimeUnit.SECONDS.toMillis(10));
        }
        Resource object = resources.created("a");
        eventually().until(() -> object.disposals.get() == 1);
        assertTrue(watched.close(Duration.ofSeconds(10)));
        assertFalse(resources.errors.stream().anyMatch(e -> e.kind() != PoolError.Kind.HELD_TOO_LONG));
    }

    private void closedByItsListenerWhileTheCallRuns(RefPool<String, Resource> watched, CountDownLatch closeReturned)
            throws InterruptedException {
        assertTrue(closeReturned.await(10, TimeUnit.SECONDS), "the listener's close() waited for the call");
        eventually().until(watched::isClosed); // the close runs on a thread of its own

        CountDownLatch otherReported = new CountDownLatch(1);
        RefPool<String, String> other = RefPool.<String, String>builder(key -> key)
                .name("still-checked")
                .heldTooLong(Duration.ofMillis(1))
                .errorListener(error -> {
                    if (error.kind() == PoolError.Kind.HELD_TOO_LONG) {
                        otherReported.countDown();
                    }
                })
                .build();
        Handle<String> otherHeld;
        try (Attachment attached = other.attach()) {
            otherHeld = other.acquire("b");
        }
        try {
            assertTrue(otherReported.await(10, TimeUnit.SECONDS), "the shared check no longer ran");
        } finally {
            otherHeld.close();
            other.close();
        }

        assertEquals(0, resources.created("a").disposals.get(), "disposed under a running call");
    }

    // the close it starts is a plain close: it interrupts nothing and abandons no queued function

    @Test
    void thatCloseCallsNoInterrupter() throws Exception {
        AtomicInteger interrupts = new AtomicInteger();
        AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();
        CountDownLatch closeReturned = new CountDownLatch(1);
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .heldTooLong(Duration.ofMillis(1))
                .interrupter((String key, Object value) -> {
                    interrupts.incrementAndGet();
                    return Interrupter.Outcome.KEEP;
                })
                .errorListener(error -> {
                    if (error.kind() == PoolError.Kind.HELD_TOO_LONG && closeReturned.getCount() > 0) {
                        self.get().close(); // a plain close: waits for the running call, interrupts nothing
                        closeReturned.countDown();
                    }
                })
                .build(key -> new Object());
        self.set(pool);
        CountDownLatch mayReturn = new CountDownLatch(1);
        CompletableFuture<String> call = pool.callAsync("k", CancellationToken.none(), value -> {
                    assertTrue(mayReturn.await(10, TimeUnit.SECONDS));
                    return "done";
                })
                .toCompletableFuture();
        try {
            assertTrue(closeReturned.await(10, TimeUnit.SECONDS), "the listener never closed the pool");
            assertEquals(0, interrupts.get(), "a plain close() from the listener called the interrupter");
        } finally {
            mayReturn.countDown();
            call.get(10, TimeUnit.SECONDS);
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
    }

    @Test
    void thatCloseWaitsForACallAsyncQueuedBeforeIt() throws Exception {
        ConcurrentLinkedQueue<Runnable> queued = new ConcurrentLinkedQueue<>();
        AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();
        CountDownLatch closeReturned = new CountDownLatch(1);
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .heldTooLong(Duration.ofMillis(1))
                .callExecutor(queued::add) // runs the functions only when the test says so
                .errorListener(error -> {
                    if (error.kind() == PoolError.Kind.HELD_TOO_LONG && closeReturned.getCount() > 0) {
                        self.get().close(); // plain: waits for a callAsync queued in the call executor
                        closeReturned.countDown();
                    }
                })
                .build(key -> new Object());
        self.set(pool);
        CompletableFuture<String> call =
                pool.callAsync("k", CancellationToken.none(), value -> "done").toCompletableFuture();
        assertEquals(1, queued.size(), "the function is in the call executor's queue");
        Handle<Object> held = pool.acquireAsync("h", CancellationToken.none())
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS); // a hold the check reports, after the function was queued
        try {
            assertTrue(closeReturned.await(10, TimeUnit.SECONDS), "the listener never closed the pool");
        } finally {
            for (Runnable r; (r = queued.poll()) != null; ) {
                r.run();
            }
            held.close();
        }
        try {
            assertEquals("done", call.get(10, TimeUnit.SECONDS), "the queued function was abandoned");
        } catch (ExecutionException e) {
            throw new AssertionError("the queued callAsync failed: " + e.getCause(), e);
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
    }

    @Test
    void aBoundedCloseFromTheListenerStillInterruptsTheCallAtItsLimit() throws Exception {
        AtomicInteger interrupts = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();
        AtomicReference<Boolean> closed = new AtomicReference<>();
        AtomicReference<Long> tookMillis = new AtomicReference<>();
        AtomicInteger interruptsAtReturn = new AtomicInteger(-1);
        CountDownLatch closeReturned = new CountDownLatch(1);
        RefPool<String, Object> pool = RefPool.<String, Object>newBuilder()
                .heldTooLong(Duration.ofMillis(1))
                .interrupter((String key, Object value) -> {
                    interrupts.incrementAndGet();
                    release.countDown();
                    return Interrupter.Outcome.KEEP;
                })
                .errorListener(error -> {
                    if (error.kind() == PoolError.Kind.HELD_TOO_LONG && closeReturned.getCount() > 0) {
                        long begun = System.nanoTime();
                        closed.set(self.get().close(Duration.ofMillis(300))); // the call held too long: stop it
                        tookMillis.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun));
                        interruptsAtReturn.set(interrupts.get());
                        closeReturned.countDown();
                    }
                })
                .build(key -> new Object());
        self.set(pool);
        CompletableFuture<String> call = pool.callAsync("k", CancellationToken.none(), value -> {
                    assertTrue(release.await(20, TimeUnit.SECONDS));
                    return "done";
                })
                .toCompletableFuture();
        try {
            assertTrue(closeReturned.await(10, TimeUnit.SECONDS), "the listener never ran");
            assertEquals(
                    1,
                    interruptsAtReturn.get(),
                    "close(300 ms) returned after " + tookMillis.get() + " ms with " + closed.get()
                            + " and had not called the interrupter of the running call");
        } finally {
            release.countDown();
            call.get(10, TimeUnit.SECONDS);
            pool.close(Duration.ofSeconds(10));
        }
    }
}
