package io.refpool.core;

import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Cascading releases: a disposed object that closes handles to others. A chain of a million objects,
 * each holding the only handle to the next, released from its head, is disposed in a loop, not by
 * recursion (the tests run with a 1 MB stack), each object exactly once, whether the head's release
 * is applied at its close or by an attach draining the deferred queue. A disposer may close handles,
 * attach again and acquire, in either mode, on every path that runs disposers, without deadlock.
 */
class CascadeTest {
    private static final int CHAIN = 1_000_000;

    /** A link: holds the handle to the next link, closes it when disposed. */
    static final class Link {
        final int index;
        Handle<Link> next;
        int disposals;

        Link(int index) {
            this.index = index;
        }
    }

    private static final class Chain {
        final Link[] links = new Link[CHAIN];
        final List<PoolError> errors = new CopyOnWriteArrayList<>();
        final RefPool<Integer, Link> pool;

        Chain(AttachMode mode) {
            pool = RefPool.builder((Integer i) -> links[i] = new Link(i))
                    .disposer(link -> {
                        link.disposals++;
                        Handle<Link> next = link.next;
                        if (next != null) {
                            next.close();
                        }
                    })
                    .attachMode(mode)
                    .drainDelay(Duration.ofHours(1))
                    .errorListener(errors::add)
                    .build();
        }

        /** {@return the head's handle; each link owns the only handle to the next} */
        Handle<Link> build() {
            try (Attachment attached = pool.attach()) {
                Handle<Link> next = null;
                for (int i = CHAIN - 1; i >= 0; i--) {
                    Handle<Link> handle = pool.acquire(i);
                    handle.get().next = next;
                    next = handle;
                }
                return next;
            }
        }

        void assertEachDisposedOnce() {
            assertEquals(List.of(), errors);
            assertEquals(CHAIN, pool.stats().disposals());
            assertEquals(0, pool.stats().live());
            for (Link link : links) {
                if (link.disposals != 1) {
                    throw new AssertionError("link " + link.index + " was disposed " + link.disposals + " times");
                }
            }
        }
    }

    @Test
    void aMillionLinkChainClosedAttachedIsDisposedInALoop() throws Exception {
        Chain chain = new Chain(AttachMode.GLOBAL);
        Handle<Link> head = chain.build();

        forkRun("releaser", () -> {
                    try (Attachment attached = chain.pool.attach()) {
                        head.close();
                    }
                })
                .join();
        chain.assertEachDisposedOnce();
    }

    @Test
    void aMillionLinkChainClosedOffAttachmentIsDisposedByTheNextAttach() throws Exception {
        Chain chain = new Chain(AttachMode.SHARED);
        Handle<Link> head = chain.build();
        head.close();
        assertEquals(1, chain.pool.stats().pendingDecrements());

        forkRun("attacher", () -> chain.pool.attach().close()).join();

        chain.assertEachDisposedOnce();
    }

    /**
     * A parent whose disposer closes its children's handles, attaches again (nested), acquires and
     * closes a new object, and closes one more handle on another thread (deferred) that it waits for.
     */
    private static final class ReentrantDisposers {
        final TestResources resources = new TestResources();
        final RefPool<String, Resource> pool;
        final List<Handle<Resource>> children = new CopyOnWriteArrayList<>();
        volatile Handle<Resource> deferredChild;

        ReentrantDisposers(AttachMode mode, Executor drainer, int drainThreshold) {
            pool = resources.build(resources
                    .builder()
                    .attachMode(mode)
                    .drainDelay(Duration.ofHours(1))
                    .drainThreshold(drainThreshold)
                    .executor(drainer));
            resources.alsoOnDispose(this::disposeParent);
        }

        private void disposeParent(Resource resource) {
            if (!resource.key.equals("parent")) {
                return;
            }
            children.forEach(Handle::close);
            try (Attachment again = pool.attach()) {
                pool.acquire("born-in-disposer").close();
            }
            try {
                forkRun("closer", deferredChild::close).join();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        Handle<Resource> setUp() {
            try (Attachment attached = pool.attach()) {
                Handle<Resource> parent = pool.acquire("parent");
                for (int i = 0; i < 3; i++) {
                    children.add(pool.acquire("child-" + i));
                }
                deferredChild = pool.acquire("deferred-child");
                return parent;
            }
        }

        void assertAllDisposed() {
            pool.attach().close(); // applies the deferred child's release if nobody did yet
            TestKit.eventually().alias("all six objects disposed").until(() -> resources.disposalCount() == 6);
            assertEquals(6, resources.createdCount());
            assertEquals(0, pool.stats().live());
            assertEquals(0, pool.stats().pendingDecrements());
            resources.assertAllDisposedOnceAttached();
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDisposerRunAtTheCloseMayCloseHandlesAndAttachAgain(AttachMode mode) throws Exception {
        ReentrantDisposers pool = new ReentrantDisposers(mode, Runnable::run, 1_000);
        Handle<Resource> parent = pool.setUp();

        forkRun("closer", () -> {
                    try (Attachment attached = pool.pool.attach()) {
                        parent.close();
                    }
                })
                .join();

        pool.assertAllDisposed();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDisposerRunByADrainingAttachMayCloseHandlesAndAttachAgain(AttachMode mode) throws Exception {
        ReentrantDisposers pool = new ReentrantDisposers(mode, Runnable::run, 1_000);
        Handle<Resource> parent = pool.setUp();
        parent.close();

        forkRun("attacher", () -> pool.pool.attach().close()).join();

        pool.assertAllDisposed();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDisposerRunByTheDrainerMayCloseHandlesAndAttachAgain(AttachMode mode) throws Exception {
        ExecutorService drainer = Executors.newSingleThreadExecutor();
        try {
            ReentrantDisposers pool = new ReentrantDisposers(mode, drainer, 1);
            Handle<Resource> parent = pool.setUp();

            parent.close();

            TestKit.eventually()
                    .alias("the drainer disposed everything")
                    .until(() -> pool.resources.disposalCount() == 6);
            pool.assertAllDisposed();
        } finally {
            drainer.shutdownNow();
        }
    }
}
