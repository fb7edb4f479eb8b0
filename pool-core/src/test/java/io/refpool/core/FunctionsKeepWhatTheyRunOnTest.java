package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A caller's function keeps what the pool promised it for as long as it runs, whatever it does
 * inside: {@code Handle.call} keeps its object (never disposed under the function or its
 * section's leave hook, though the handle closes meanwhile), and a two-key or timed {@code
 * call} ends attachments its function left open, as a one-key call does, so its own gate hold is
 * given back.
 */
class FunctionsKeepWhatTheyRunOnTest {
    private static final long BOUND_SECONDS = 10;

    static final class Box {
        final AtomicInteger disposals = new AtomicInteger();
    }

    private static RefPool.Builder<String, Box> builder() {
        return RefPool.builder((String key) -> new Box())
                .disposer(box -> box.disposals.incrementAndGet())
                .attachMode(AttachMode.PER_OBJECT);
    }

    /** {@return whether another thread stops the world within the bound}: no gate hold was lost */
    private static boolean worldStops(RefPool<String, Box> pool) throws Exception {
        return fork("stopper", () -> {
                    try (Attachment world = pool.stopTheWorld(Duration.ofSeconds(BOUND_SECONDS))) {
                        return true;
                    } catch (WaitTimeoutException e) {
                        return false;
                    }
                })
                .join();
    }

    @Test
    void aHandleCallWaitingForTheSectionKeepsItsObjectThoughTheHandleClosesMeanwhile() throws Exception {
        RefPool<String, Box> pool = builder().build();
        Handle<Box> handle;
        Guard section;
        try (Attachment attached = pool.attach()) {
            handle = pool.acquire("k");
            section = handle.section(); // held here: the call below waits for it
        }
        CountDownLatch go = new CountDownLatch(1);
        Forked<Integer> caller = fork(
                "caller",
                () -> handle.call(box -> {
                    assertTrue(go.await(BOUND_SECONDS, TimeUnit.SECONDS), "go");
                    return box.disposals.get();
                }));
        awaitParked(caller.thread); // in Handle.call, waiting for the section
        Box box;
        try (Attachment attached = pool.attach()) {
            box = handle.get();
            handle.close(); // attached: a zero would dispose the object here
            section.close(); // hands the section over, and gives its own reference back
        }
        go.countDown();
        assertEquals(0, caller.join(), "disposals of the object while Handle.call's function ran on it");
        assertEquals(0, pool.stats().live(), "released once the call returned");
        pool.close();
        assertEquals(1, box.disposals.get());
    }

    @Test
    void aHandleCallWhoseFunctionClosesTheHandleKeepsItsObjectUntilTheLeaveHookRan() {
        AtomicInteger seenByLeave = new AtomicInteger(-1);
        RefPool<String, Box> pool = builder()
                .sectionHooks(SectionHooks.of(
                        (String key, Box box) -> {}, (String key, Box box) -> seenByLeave.set(box.disposals.get())))
                .build();
        Handle<Box> handle = pool.attached(() -> pool.acquire("k"));
        int seenByFn = handle.call(box -> {
            handle.close(); // the caller's own handle, closed inside its call
            return box.disposals.get();
        });
        assertEquals(0, seenByFn, "disposals seen by the function after it closed the handle");
        assertEquals(0, seenByLeave.get(), "disposals seen by the section's leave hook");
        pool.close();
    }

    @Test
    void aTwoKeyCallEndsAnAttachmentItsFunctionLeftOpen() throws Exception {
        RefPool<String, Box> pool = builder().build();
        boolean attachedAfter = fork("two-key", () -> {
                    pool.call("a", "b", (a, b) -> pool.attach()); // left open
                    return pool.isAttached();
                })
                .join();
        assertFalse(attachedAfter, "the call returned detached");
        assertTrue(worldStops(pool), "no gate hold was left behind");
        pool.close();
    }

    @Test
    void aTimedCallEndsAnAttachmentItsFunctionLeftOpen() throws Exception {
        RefPool<String, Box> pool = builder().build();
        boolean attachedAfter = fork("timed", () -> {
                    pool.call("a", Duration.ofSeconds(BOUND_SECONDS), a -> pool.attach()); // left open
                    return pool.isAttached();
                })
                .join();
        assertFalse(attachedAfter, "the call returned detached");
        assertTrue(worldStops(pool), "no gate hold was left behind");
        pool.close();
    }
}
