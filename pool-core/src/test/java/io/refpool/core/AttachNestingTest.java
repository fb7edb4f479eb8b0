package io.refpool.core;

import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Where a handle's close is applied: an attached close decrements at once; a close off-attachment
 * leaves the count as it is until an attach applies it — the next outermost attach, a nested attach,
 * or the outermost detach of a thread that stayed attached meanwhile. The drainer is pushed an hour
 * away so that only attaches apply anything here.
 */
class AttachNestingTest {
    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
    }

    @Test
    void attachedCloseDecrementsNowAndDisposesAtZero() {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        try (Attachment attached = pool.attach()) {
            Handle<Resource> handle = pool.acquire("a");
            Handle<Resource> copy = handle.share();

            handle.close();
            assertEquals(1, pool.stats().live(), "one handle is still open");
            assertEquals(0, resources.disposalCount());

            copy.close();
            assertEquals(0, pool.stats().pendingDecrements(), "nothing was deferred");
            assertEquals(0, pool.stats().live());
            assertEquals(1, resources.disposalCount(), "the last attached close disposed at once");
            assertSame(Thread.currentThread(), resources.created("a").disposedOn);
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void offAttachmentCloseLeavesTheCountUntilTheNextAttach() {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        Handle<Resource> handle;
        try (Attachment attached = pool.attach()) {
            handle = pool.acquire("a");
        }

        handle.close();
        assertFalse(handle.isOpen());
        assertEquals(1, pool.stats().pendingDecrements(), "the close was deferred");
        assertEquals(1, pool.stats().live(), "the count is unchanged until an attach applies it");
        assertEquals(0, resources.disposalCount());

        try (Attachment attached = pool.attach()) {
            assertEquals(0, pool.stats().pendingDecrements(), "the attach applied the pending decrement");
            assertEquals(0, pool.stats().live());
            assertEquals(1, resources.disposalCount());
            assertSame(Thread.currentThread(), resources.created("a").disposedOn, "applied by the attaching thread");
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void nestedAttachAppliesADecrementDeferredMeanwhile() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        try (Attachment outer = pool.attach()) {
            Handle<Resource> handle = pool.acquire("a");
            forkRun("releaser", handle::close).join(); // off-attachment: the gate is held here

            assertEquals(1, pool.stats().pendingDecrements());
            assertEquals(1, pool.stats().live());

            try (Attachment nested = pool.attach()) {
                assertEquals(0, pool.stats().pendingDecrements(), "the nested attach applied it");
                assertEquals(0, pool.stats().live());
                assertEquals(1, resources.disposalCount());
            }
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void outermostDetachAppliesADecrementDeferredMeanwhile() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        Attachment outer = pool.attach();
        Handle<Resource> handle = pool.acquire("a");
        forkRun("releaser", handle::close).join();
        assertEquals(1, pool.stats().pendingDecrements());

        try (Attachment nested = pool.attach()) {
            forkRun("releaser", pool.acquire("b")::close).join();
        }
        assertEquals(1, pool.stats().pendingDecrements(), "a nested close does not look at the queue");

        outer.close();
        assertFalse(pool.isAttached());
        assertEquals(0, pool.stats().pendingDecrements(), "the outermost detach applied what was pending");
        assertEquals(0, pool.stats().live());
        assertEquals(2, resources.disposalCount());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void closeInsideADetachedSectionIsDeferredAndAppliedOnReattach() {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        try (Attachment attached = pool.attach()) {
            Handle<Resource> handle = pool.acquire("a");
            long pendingInside = attached.detached(() -> {
                assertFalse(pool.isAttached());
                handle.close();
                return pool.stats().pendingDecrements();
            });
            assertEquals(1, pendingInside, "closed while detached: deferred");
            assertTrue(pool.isAttached());
            assertEquals(0, pool.stats().pendingDecrements(), "taking the gate back applied it");
            assertEquals(1, resources.disposalCount());
        }
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void deferredDecrementKeepsAKeyAcquiredAgainMeanwhileLive() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        try (Attachment outer = pool.attach()) {
            Handle<Resource> first = pool.acquire("a");
            forkRun("releaser", first::close).join();
            assertEquals(1, pool.stats().pendingDecrements());

            Handle<Resource> again = pool.acquire("a"); // no attach in between: nothing applied yet
            assertSame(resources.created("a"), again.get(), "the live object is shared, not created anew");

            try (Attachment nested = pool.attach()) {
                assertEquals(0, pool.stats().pendingDecrements());
                assertEquals(1, pool.stats().live(), "the deferred decrement left the new handle's reference");
                assertEquals(0, resources.disposalCount());
            }
            again.close();
            assertEquals(1, resources.disposalCount());
        }
        assertEquals(1, resources.createdCount());
        resources.assertAllDisposedOnceAttached();
    }
}
