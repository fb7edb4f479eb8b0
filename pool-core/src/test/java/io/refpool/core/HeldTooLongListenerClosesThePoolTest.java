package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
}
