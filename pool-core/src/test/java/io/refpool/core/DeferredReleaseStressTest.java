package io.refpool.core;

import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The benign race under load: 8 threads close 100,000 handles each off-attachment while 2 threads
 * attach and drain as fast as they can (and the releasers attach to acquire, and the drainer runs
 * past the threshold). An attach that misses a concurrent enqueue leaves it to a later one; nothing
 * may be lost or applied twice. The sums are exact: every object is disposed exactly once, never
 * while a handle to it is open, and a final attach leaves nothing pending.
 */
class DeferredReleaseStressTest {
    private static final int RELEASERS = 8;
    private static final int ATTACHERS = 2;
    private static final int CLOSES_PER_RELEASER = 100_000;
    private static final int HANDLES_PER_OBJECT = 8;

    @Test
    void offAttachmentClosesRacingAttachesAreEachAppliedExactlyOnce() throws Exception {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool = resources.pool(AttachMode.SHARED);
        CyclicBarrier start = new CyclicBarrier(RELEASERS + ATTACHERS);
        List<Forked<Long>> releasers = new ArrayList<>();
        for (int t = 0; t < RELEASERS; t++) {
            int thread = t;
            releasers.add(fork("releaser-" + t, () -> {
                start.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS);
                Handle<?>[] handles = new Handle<?>[HANDLES_PER_OBJECT];
                Resource[] owners = new Resource[HANDLES_PER_OBJECT];
                long closes = 0;
                for (int round = 0; closes < CLOSES_PER_RELEASER; round++) {
                    try (Attachment attached = pool.attach()) {
                        Handle<Resource> first = pool.acquire(thread + "-" + round);
                        handles[0] = first;
                        for (int i = 1; i < HANDLES_PER_OBJECT; i++) {
                            handles[i] = first.share();
                        }
                        first.get().openHandles.addAndGet(HANDLES_PER_OBJECT);
                        java.util.Arrays.fill(owners, first.get());
                    }
                    for (int i = 0; i < HANDLES_PER_OBJECT; i++) {
                        owners[i].openHandles.decrementAndGet();
                        handles[i].close(); // detached: deferred
                        closes++;
                    }
                }
                return closes;
            }));
        }
        List<Forked<Long>> attachers = new ArrayList<>();
        for (int t = 0; t < ATTACHERS; t++) {
            attachers.add(fork("attacher-" + t, () -> {
                start.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS);
                long attaches = 0;
                while (!releasers.stream().allMatch(r -> r.outcome.isDone())) {
                    try (Attachment outer = pool.attach()) {
                        pool.attach().close();
                    }
                    attaches++;
                }
                return attaches;
            }));
        }

        long closes = 0;
        for (Forked<Long> releaser : releasers) {
            closes += releaser.join();
        }
        for (Forked<Long> attacher : attachers) {
            assertTrue(attacher.join() > 0);
        }
        pool.attach().close();

        assertEquals((long) RELEASERS * CLOSES_PER_RELEASER, closes);
        assertEquals(0, pool.stats().pendingDecrements(), "the final attach left releases pending");
        assertEquals(0, pool.stats().live(), "every reference was given back");
        assertEquals(closes / HANDLES_PER_OBJECT, resources.createdCount());
        assertEquals(resources.createdCount(), pool.stats().disposals());
        resources.assertAllDisposedOnceAttached();
    }
}
