package io.refpool.core;

import static io.refpool.testkit.TestKit.forkRun;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.ReleaseQueueHooks.Point;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The enqueue order — add under the lock, then raise the flag — is what keeps a deferred release
 * from being stranded. Each test pauses a releaser between its add and its flag store (the queue's
 * {@code BETWEEN_ADD_AND_FLAG} hook) while another thread attaches and drains, then checks that,
 * once every thread is done, one final attach leaves nothing pending and every object is disposed
 * exactly once. With the two steps swapped (flag first), the drainer clears the flag and swaps out
 * the list before the add, and the final attach finds the flag down and the release stranded.
 *
 * <p>The drainer is pushed an hour away, so only the attaches the tests make apply releases.
 */
class DeferredReleaseOrderingTest {
    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
    }

    private static Handle<Resource> acquireAttached(RefPool<String, Resource> pool, String key) {
        try (Attachment attached = pool.attach()) {
            return pool.acquire(key);
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachThatMissesAPausedReleaserLeavesItForTheNextAttach(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        Handle<Resource> handle = acquireAttached(pool, "a");
        Forked<Void> releaser = unstartedRun("releaser", handle::close);
        TestReleaseHooks hooks = TestReleaseHooks.pausing(Point.BETWEEN_ADD_AND_FLAG, releaser.thread);
        pool.core().releaseQueue().setHooks(hooks);

        releaser.start();
        hooks.awaitArrival();
        forkRun("drainer", () -> pool.attach().close()).join();
        assertEquals(0, resources.disposalCount(), "the attach raced the enqueue and missed it");

        hooks.proceed();
        releaser.join();
        pool.attach().close();

        assertEquals(0, pool.stats().pendingDecrements(), "the final attach left a release stranded");
        assertEquals(0, pool.stats().live());
        resources.assertAllDisposedOnceAttached();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDrainWhileAReleaserIsPausedStrandsNothing(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        Handle<Resource> earlier = acquireAttached(pool, "earlier");
        Handle<Resource> paused = acquireAttached(pool, "paused");
        earlier.close(); // a completed off-attachment close: the flag is up, the drain below is real
        assertEquals(1, pool.stats().pendingDecrements());

        Forked<Void> releaser = unstartedRun("releaser", paused::close);
        TestReleaseHooks hooks = TestReleaseHooks.pausing(Point.BETWEEN_ADD_AND_FLAG, releaser.thread);
        pool.core().releaseQueue().setHooks(hooks);
        releaser.start();
        hooks.awaitArrival();

        forkRun("drainer", () -> pool.attach().close()).join();
        assertEquals(1, resources.created("earlier").disposals.get(), "the drain applied the completed close");

        hooks.proceed();
        releaser.join();
        pool.attach().close();

        assertEquals(0, pool.stats().pendingDecrements(), "the final attach left a release stranded");
        assertEquals(0, pool.stats().live());
        assertEquals(2, resources.disposalCount());
        resources.assertAllDisposedOnceAttached();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeAppliesAReleaseWhoseFlagIsNotRaisedYet(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        Handle<Resource> handle = acquireAttached(pool, "a");
        Forked<Void> releaser = unstartedRun("releaser", handle::close);
        TestReleaseHooks hooks = TestReleaseHooks.pausing(Point.BETWEEN_ADD_AND_FLAG, releaser.thread);
        pool.core().releaseQueue().setHooks(hooks);
        releaser.start();
        hooks.awaitArrival(); // in the list, flag down

        pool.close();
        assertEquals(1, resources.created("a").disposals.get(), "close took the list, not just the flag");

        hooks.proceed();
        releaser.join();
        assertEquals(0, pool.stats().pendingDecrements());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSharedAttachThatMissesAnotherAttachersDrainAppliesNothingTwice() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        Handle<Resource> first = acquireAttached(pool, "first");
        Handle<Resource> second = acquireAttached(pool, "second");
        first.close();

        // the first drainer wins the flag and stops before taking the lock to swap the batch out
        Forked<Void> drainer = unstartedRun("drainer", () -> pool.attach().close());
        TestReleaseHooks hooks = TestReleaseHooks.pausing(Point.QUEUE_LOCK, drainer.thread);
        pool.core().releaseQueue().setHooks(hooks);
        drainer.start();
        hooks.awaitArrival();
        assertFalse(pool.core().releaseQueue().isDirty(), "the drainer cleared the flag");

        forkRun("releaser", second::close).join(); // raises the flag again
        assertTrue(pool.core().releaseQueue().isDirty());
        try (Attachment other = pool.attach()) { // wins the flag, swaps out both releases, applies them
            assertEquals(2, resources.disposalCount());
        }

        hooks.proceed();
        drainer.join(); // swaps out an empty list
        pool.attach().close();

        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(0, pool.stats().live());
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aSharedAttachThatSeesTheFlagDownWhileAnotherSwapsGoesOnWithoutWaiting() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        Handle<Resource> handle = acquireAttached(pool, "a");
        handle.close();

        Forked<Void> drainer = unstartedRun("drainer", () -> pool.attach().close());
        TestReleaseHooks hooks = TestReleaseHooks.pausing(Point.QUEUE_LOCK, drainer.thread);
        pool.core().releaseQueue().setHooks(hooks);
        drainer.start();
        hooks.awaitArrival();

        forkRun("second attacher", () -> pool.attach().close()).join();
        assertEquals(0, resources.disposalCount(), "the batch belongs to the first drainer");
        assertEquals(1, pool.stats().pendingDecrements());

        hooks.proceed();
        drainer.join();
        assertEquals(0, pool.stats().pendingDecrements());
        resources.assertAllDisposedOnceAttached();
    }
}
