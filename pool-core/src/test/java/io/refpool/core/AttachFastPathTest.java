package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.ReleaseQueueHooks.Point;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The attach check writes nothing shared when nothing is pending: a million nested attaches never
 * take the release queue's lock (counted at the queue's {@code QUEUE_LOCK} hook). That they allocate
 * nothing is measured in {@link AttachFastPathAllocationTest}, in a JVM of its own.
 */
class AttachFastPathTest {
    private static final int NESTED_ATTACHES = 1_000_000;

    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void nestedAttachesWithNothingPendingNeverTakeTheQueueLock(AttachMode mode) {
        RefPool<String, Resource> pool = pool(mode);
        TestReleaseHooks hooks = TestReleaseHooks.counting();
        pool.core().releaseQueue().setHooks(hooks);
        try (Attachment outer = pool.attach()) {
            for (int i = 0; i < NESTED_ATTACHES; i++) {
                pool.attach().close();
            }
        }
        assertEquals(0, hooks.count(Point.QUEUE_LOCK), "attaching with nothing pending took the queue lock");
    }

    @Test
    void theLockCountSeesAnEnqueueAndTheDrainThatFollows() {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        Handle<Resource> handle;
        try (Attachment attached = pool.attach()) {
            handle = pool.acquire("a");
        }
        TestReleaseHooks hooks = TestReleaseHooks.counting();
        pool.core().releaseQueue().setHooks(hooks);

        handle.close();
        assertEquals(1, hooks.count(Point.QUEUE_LOCK), "the enqueue");
        pool.attach().close();
        assertEquals(2, hooks.count(Point.QUEUE_LOCK), "the drain's swap");
        pool.attach().close();
        assertEquals(2, hooks.count(Point.QUEUE_LOCK), "nothing pending any more");
    }
}
