package io.refpool.core;

import static io.refpool.testkit.TestKit.unstarted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * An {@code acquireAsync} on a detached thread takes a reference to its key's live object, and
 * before it checks, the object is invalidated and its other handle closed: the acquire's reference is
 * now the object's last. It gives that reference back and creates a new object; the retired one is
 * disposed attached, as every object is. Before, the acquire gave the reference back itself and so
 * ran the disposer on its own detached thread.
 */
class AcquireAsyncOfARetiredObjectTest {
    private final TestResources resources = new TestResources();

    @Test
    void theLastReferenceToARetiredObjectGoesBackAttached() throws Exception {
        for (AttachMode mode : AttachMode.values()) {
            RefPool<String, Resource> pool =
                    resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
            TestPoolHooks hooks = new TestPoolHooks();
            pool.core().setHooks(hooks);
            Handle<Resource> held;
            try (Attachment attached = pool.attach()) {
                held = pool.acquire("k");
            }
            Resource old = held.get();
            Forked<Handle<Resource>> acquirer =
                    unstarted("acquirer", () -> pool.acquireAsync("k", CancellationToken.none())
                            .toCompletableFuture()
                            .join());
            PointPauses.Pause retained = hooks.pause(Point.ASYNC_RETAINED, acquirer.thread);
            acquirer.start();
            retained.awaitArrival(); // its reference taken: the count is 2
            try (Attachment attached = pool.attach()) {
                pool.invalidate("k"); // retired under two references: disposed at zero
                held.close(); // the count is 1: the acquirer's
            }
            retained.proceed();
            Handle<Resource> fresh = acquirer.join();
            assertNotSame(old, fresh.get(), mode + ": a new object for the key");
            pool.flush(); // the acquirer's reference, queued: applied here, attached
            assertEquals(1, old.disposals.get(), mode.name());
            try (Attachment attached = pool.attach()) {
                fresh.close();
            }
            pool.close();
        }
        resources.assertAllDisposedOnceAttached();
    }
}
