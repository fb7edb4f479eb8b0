package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Misuse of handles and attachments fails clearly at the call that made it and changes nothing: a
 * second close of a handle is a no-op that never decrements again, {@code get}/{@code share} after
 * close throw, an attachment closed on another thread, twice or out of nesting order throws, and
 * {@code acquire} on a detached thread throws with a message saying how to attach.
 */
class HandleMisuseTest {
    private final TestResources resources = new TestResources();
    private final RefPool<String, Resource> pool =
            resources.build(resources.builder().drainDelay(Duration.ofHours(1)));

    @Test
    void aSecondAttachedCloseIsANoOpAndNeverDecrementsAgain() {
        try (Attachment attached = pool.attach()) {
            Handle<Resource> handle = pool.acquire("a");
            Handle<Resource> copy = handle.share();

            handle.close();
            handle.close();

            assertTrue(copy.isOpen());
            assertEquals(1, pool.stats().live(), "the copy's reference is intact");
            assertEquals(0, resources.disposalCount());
            copy.close();
            assertEquals(1, resources.disposalCount());
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSecondCloseOffAttachmentEnqueuesNothing() {
        Handle<Resource> handle;
        Handle<Resource> copy;
        try (Attachment attached = pool.attach()) {
            handle = pool.acquire("a");
            copy = handle.share();
        }
        handle.close();
        handle.close();
        assertEquals(1, pool.stats().pendingDecrements(), "one decrement for one handle");

        pool.attach().close();
        assertEquals(1, pool.stats().live(), "the copy's reference is intact");
        copy.close();
        pool.attach().close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void getAndShareOnAClosedHandleThrowAndNameTheKey() {
        try (Attachment attached = pool.attach()) {
            Handle<Resource> handle = pool.acquire("tenant-7");
            Handle<Resource> keep = pool.acquire("tenant-7");
            handle.close();

            IllegalStateException get = assertThrows(IllegalStateException.class, handle::get);
            assertTrue(
                    get.getMessage().contains("'tenant-7'") && get.getMessage().contains("closed"), get.getMessage());
            IllegalStateException share = assertThrows(IllegalStateException.class, handle::share);
            assertTrue(share.getMessage().contains("'tenant-7'"), share.getMessage());

            assertEquals(1, pool.stats().live());
            assertSame(resources.created("tenant-7"), keep.get(), "the failed calls changed nothing");
            keep.close();
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void shareWorksDetachedAndAddsItsReferenceAtOnce() throws Exception {
        Handle<Resource> handle;
        try (Attachment attached = pool.attach()) {
            handle = pool.acquire("a");
        }
        Handle<Resource> copy = fork("sharer", handle::share).join();
        try (Attachment attached = pool.attach()) {
            handle.close();
            assertEquals(0, resources.disposalCount(), "the detached share counted at once");
            copy.close();
            assertEquals(1, resources.disposalCount());
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void acquireOnADetachedThreadThrowsAndSaysHowToAttach() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.acquire("a"));
        assertTrue(e.getMessage().contains("pool.attach()"), e.getMessage());
        assertTrue(e.getMessage().contains("'a'"), e.getMessage());
        assertEquals(0, resources.createdCount(), "nothing was created");

        try (Attachment attached = pool.attach()) {
            attached.detached(() -> assertThrows(IllegalStateException.class, () -> pool.acquire("a")));
        }
        assertEquals(0, resources.createdCount());
    }

    @Test
    void closingAnAttachmentOnAnotherThreadThrowsAndLeavesItOpen() throws Exception {
        Attachment attached = pool.attach();

        Throwable failure = forkRun("stranger", attached::close).joinFailure();

        assertInstanceOf(IllegalStateException.class, failure);
        assertTrue(failure.getMessage().contains("bound to their thread"), failure.getMessage());
        assertTrue(pool.isAttached(), "the owner is still attached");
        Throwable detached =
                forkRun("stranger", () -> attached.detached(() -> null)).joinFailure();
        assertInstanceOf(IllegalStateException.class, detached);
        attached.close();
        assertFalse(pool.isAttached());
    }

    @Test
    void closingAnAttachmentTwiceThrows() throws Exception {
        Attachment attached = pool.attach();
        attached.close();

        IllegalStateException e = assertThrows(IllegalStateException.class, attached::close);
        assertTrue(e.getMessage().contains("already closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> attached.detached(() -> null));
        assertFalse(pool.isAttached());
        forkRun("newcomer", () -> pool.attach().close()).join(); // the gate was given up once
    }

    @Test
    void closingAnOuterAttachmentBeforeAnInnerOneThrowsAndChangesNothing() {
        Attachment outer = pool.attach();
        Attachment inner = pool.attach();

        IllegalStateException e = assertThrows(IllegalStateException.class, outer::close);
        assertTrue(e.getMessage().contains("innermost first"), e.getMessage());
        assertTrue(pool.isAttached());
        try (Handle<Resource> handle = pool.acquire("a")) {
            assertTrue(handle.isOpen(), "still attached, at both levels");
        }

        inner.close();
        assertTrue(pool.isAttached());
        outer.close();
        assertFalse(pool.isAttached());
    }
}
