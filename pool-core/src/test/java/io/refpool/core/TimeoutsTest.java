package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The timed waits: each fails with a {@link WaitTimeoutException} that names the pool, what was
 * waited for and for how long, and whose stack trace is the caller's; nothing is held afterwards.
 */
class TimeoutsTest {
    private static final Duration SHORT = Duration.ofMillis(50);

    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode, int maxObjects) {
        return resources.build(
                resources.builder().name("timeouts").attachMode(mode).maxObjects(maxObjects));
    }

    private static boolean hasFrame(Throwable failure, String method) {
        return Arrays.stream(failure.getStackTrace())
                .anyMatch(frame -> frame.getMethodName().equals(method));
    }

    /** Holds {@code work}'s result on another thread until {@code release} is counted down. */
    private static TestKit.Forked<Void> holdOnAnotherThread(
            CountDownLatch held, CountDownLatch release, Runnable enter, Runnable leave) {
        return TestKit.forkRun("holder", () -> {
            enter.run();
            held.countDown();
            TestKeyedPoolFixtures.awaitLatch(release);
            leave.run();
        });
    }

    @Test
    void attachWithinATimeoutFailsWithTheCallersStackAndHoldsNothing() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED, Integer.MAX_VALUE);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Attachment[] world = new Attachment[1];
        TestKit.Forked<Void> holder =
                holdOnAnotherThread(held, release, () -> world[0] = pool.stopTheWorld(), () -> world[0].close());
        TestKeyedPoolFixtures.awaitLatch(held);

        WaitTimeoutException timedOut = assertThrows(WaitTimeoutException.class, () -> pool.attach(SHORT));
        assertEquals("timed out after 50 ms waiting for the attach gate of pool 'timeouts'", timedOut.getMessage());
        assertEquals(SHORT, timedOut.timeout());
        assertTrue(hasFrame(timedOut, "attachWithinATimeoutFailsWithTheCallersStackAndHoldsNothing"));
        assertFalse(pool.isAttached());

        release.countDown();
        holder.join();
        try (Attachment attached = pool.attach(SHORT)) { // the gate is free: no wait, no timer
            assertTrue(pool.isAttached());
        }
        pool.close();
    }

    @Test
    void exclusiveWithinATimeoutNamesWhatItWaitedFor() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED, Integer.MAX_VALUE);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Attachment[] shared = new Attachment[1];
        TestKit.Forked<Void> holder =
                holdOnAnotherThread(held, release, () -> shared[0] = pool.attach(), () -> shared[0].close());
        TestKeyedPoolFixtures.awaitLatch(held);

        WaitTimeoutException timedOut = assertThrows(WaitTimeoutException.class, () -> pool.stopTheWorld(SHORT));
        assertTrue(timedOut.getMessage().contains("exclusive use of pool 'timeouts'"), timedOut.getMessage());
        assertTrue(hasFrame(timedOut, "exclusiveWithinATimeoutNamesWhatItWaitedFor"));
        release.countDown();
        holder.join();
        pool.stopTheWorld(SHORT).close();
        pool.close();
    }

    @Test
    void acquireAsyncWithinATimeoutFailsItsStageWithTheCallersStackAndLosesNoPermit() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED, 1);
        Handle<Resource> only = pool.attached(() -> pool.acquire("a")); // the one permit is in use

        // not a cancellation: the stage fails with it, and join() and get() report it as their cause
        WaitTimeoutException timedOut =
                assertInstanceOf(WaitTimeoutException.class, TestKit.joinedFailure(pool.acquireAsync("b", SHORT)));
        assertEquals(
                "timed out after 50 ms waiting for an object for key 'b' in pool 'timeouts'", timedOut.getMessage());
        assertTrue(hasFrame(timedOut, "acquireAsyncWithinATimeoutFailsItsStageWithTheCallersStackAndLosesNoPermit"));
        assertEquals(0, pool.stats().capacityWaiters(), "the wait left the line");

        pool.attached(() -> {
            only.close(); // the permit comes back
            return null;
        });
        Handle<Resource> b = pool.acquireAsync("b", SHORT).toCompletableFuture().join();
        pool.attached(() -> {
            b.close();
            return null;
        });
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSectionWithinATimeoutFailsNamingKeyAndPoolAndGivesItsReferenceBack() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.PER_OBJECT, Integer.MAX_VALUE);
        Handle<Resource> handle = pool.attached(() -> pool.acquire("a"));
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        TestKit.Forked<Integer> holder = fork(
                "holder",
                () -> pool.call("a", resource -> {
                    inside.countDown();
                    TestKeyedPoolFixtures.awaitLatch(leave);
                    return 1;
                }));
        TestKeyedPoolFixtures.awaitLatch(inside);

        WaitTimeoutException timedOut =
                pool.attached(() -> assertThrows(WaitTimeoutException.class, () -> handle.section(SHORT)));
        assertEquals(
                "timed out after 50 ms waiting for the section of key 'a' in pool 'timeouts'", timedOut.getMessage());
        assertTrue(hasFrame(timedOut, "aSectionWithinATimeoutFailsNamingKeyAndPoolAndGivesItsReferenceBack"));
        leave.countDown();
        assertEquals(1, holder.join());
        try (Guard section = pool.attached(() -> handle.section(SHORT))) { // free: taken at once
            assertTrue(section != null);
        }
        pool.attached(() -> {
            handle.close();
            return null;
        });
        assertEquals(0, pool.stats().live(), "the timed-out wait gave its reference back");
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
