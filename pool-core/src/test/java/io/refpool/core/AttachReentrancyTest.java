package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Attachments that interleave on one thread: an async attachment granted to a thread while it is
 * inside another attachment's {@code detached()} section runs there, in full, and the suspended
 * attachment resumes with its own scopes intact. The scopes opened in the section use slots above
 * the suspended ones, so closing one never closes (or reopens) the other.
 */
class AttachReentrancyTest {
    private final TestResources resources = new TestResources();

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a deadlock fails, not hangs
    void anAsyncAttachmentGrantedDuringADetachedSectionLeavesTheSuspendedOneIntact(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(mode));
        List<String> order = new CopyOnWriteArrayList<>();
        Attachment held = pool.stopTheWorld(); // both async attachments below have to wait
        CompletableFuture<String> first = pool.attachAsync(CancellationToken.none(), attached -> {
                    order.add("first attached");
                    String inside = attached.detached(() -> {
                        order.add("first detached");
                        return "done";
                    });
                    assertTrue(pool.isAttached(), "the first attachment resumed attached");
                    try (Attachment nested = pool.attach()) {
                        order.add("first nested");
                    }
                    return inside;
                })
                .toCompletableFuture();
        CompletableFuture<String> second = pool.attachAsync(CancellationToken.none(), attached -> {
                    order.add("second attached");
                    try (Attachment nested = pool.attach()) {
                        order.add("second nested");
                    }
                    return "second";
                })
                .toCompletableFuture();

        held.close(); // grants the first on this thread; its detached() section grants the second

        assertEquals("done", first.get(30, TimeUnit.SECONDS));
        assertEquals("second", second.get(30, TimeUnit.SECONDS));
        assertFalse(pool.isAttached(), "every attachment on this thread ended");
        assertTrue(order.indexOf("first detached") < order.indexOf("first nested"), order.toString());
        assertTrue(order.contains("second nested"), order.toString());
        try (Attachment again = pool.stopTheWorld()) { // the gate is free: nobody holds it any more
            assertTrue(pool.isAttached());
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void detachedOnAnAttachmentItsOwnSectionSuspendedThrowsAndLeavesTheSectionRunning(AttachMode mode) {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(mode));
        try (Attachment attached = pool.attach()) {
            String result = attached.detached(() -> {
                IllegalStateException thrown =
                        assertThrows(IllegalStateException.class, () -> attached.detached(() -> "again"));
                assertTrue(thrown.getMessage().contains("suspended"), thrown.getMessage());
                assertFalse(pool.isAttached(), "still inside the first section");
                return "section";
            });
            assertEquals("section", result);
            assertTrue(pool.isAttached(), "resumed after the section");
        }
        assertFalse(pool.isAttached());
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closingAnAttachmentAgainAfterTheThreadAttachedOnceMoreStillThrows(AttachMode mode) {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(mode));
        try (Attachment outer = pool.attach()) {
            Attachment first = pool.attach();
            first.close();
            try (Attachment second = pool.attach()) { // the same nesting level, opened again
                assertThrows(IllegalStateException.class, first::close, "the first one is closed");
                assertTrue(pool.isAttached());
            }
        }
        Attachment top = pool.attach();
        top.close();
        Attachment again = pool.attach();
        assertThrows(IllegalStateException.class, top::close);
        again.close();
        assertFalse(pool.isAttached());
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aScopeSuspendedByDetachedCannotBeClosedFromInsideTheSection(AttachMode mode) {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(mode));
        try (Attachment outer = pool.attach()) {
            outer.detached(() -> {
                try (Attachment inner = pool.attach()) {
                    assertThrows(IllegalStateException.class, outer::close, "the suspended scope is not innermost");
                }
                return null;
            });
            assertTrue(pool.isAttached());
        }
        assertFalse(pool.isAttached());
    }

    /**
     * The attachment whose own {@code detached()} section is running is suspended like those below
     * it: closing it there throws, and changes nothing, at any level. The thread has no depth in the
     * section, so a check that only compares the scope with the innermost open level takes it for
     * the innermost one and leaves a gate this thread does not hold.
     */
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void theAttachmentWhoseSectionIsRunningCannotBeClosedFromInsideIt(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(mode));
        try (Attachment outer = pool.attach()) {
            closingInsideItsOwnSectionThrows(pool, outer);
            try (Attachment inner = pool.attach()) {
                closingInsideItsOwnSectionThrows(pool, inner);
            }
            assertTrue(pool.isAttached(), "the outer attachment is still open");
            CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> {
                try (Attachment world = pool.stopTheWorld(Duration.ofMillis(50))) {
                    return true;
                } catch (WaitTimeoutException e) {
                    return false;
                }
            });
            assertFalse(stopped.get(30, TimeUnit.SECONDS), "the world cannot stop while this thread is attached");
        }
        assertFalse(pool.isAttached());
        CompletableFuture<Void> stopped =
                CompletableFuture.runAsync(() -> pool.stopTheWorld().close());
        stopped.get(30, TimeUnit.SECONDS); // the gate is whole: it lets a stop in once this thread left
    }

    private static void closingInsideItsOwnSectionThrows(RefPool<String, Resource> pool, Attachment attachment) {
        attachment.detached(() -> {
            IllegalStateException thrown = assertThrows(IllegalStateException.class, attachment::close);
            assertTrue(thrown.getMessage().contains("suspended"), thrown.getMessage());
            assertFalse(pool.isAttached(), "still inside the section");
            return null;
        });
        assertTrue(pool.isAttached(), "resumed after the section");
    }
}
