package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.TestKit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Ten thousand virtual threads attach, acquire, share a handle with a neighbour and close what they
 * hold, attached and off-attachment, across threads; every object is disposed exactly once, never
 * while a handle to it is open, and nothing stays pending. The attach gate parks with
 * {@code LockSupport}, so waiting virtual threads release their carriers.
 *
 * <p>Virtual threads need JDK 21; the code compiles for 17, so they are made through
 * {@code Executors.newVirtualThreadPerTaskExecutor()} found reflectively, and the test is skipped
 * (and reported as skipped) on older JDKs.
 */
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadAttachTest {
    private static final int THREADS = 10_000;
    private static final int KEYS = 64;

    private static ExecutorService newVirtualThreadPerTaskExecutor() throws ReflectiveOperationException {
        return (ExecutorService)
                Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void tenThousandVirtualThreadsAttachShareAndClose(AttachMode mode) throws Exception {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool = resources.pool(mode);
        List<CompletableFuture<Handle<Resource>>> mailboxes = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            mailboxes.add(new CompletableFuture<>());
        }
        List<Future<?>> done = new ArrayList<>();
        ExecutorService threads = newVirtualThreadPerTaskExecutor();
        try {
            for (int t = 0; t < THREADS; t++) {
                int i = t;
                done.add(threads.submit(() -> {
                    Handle<Resource> mine;
                    try (Attachment attached = pool.attach()) {
                        mine = pool.acquire("k" + (i % KEYS));
                        Handle<Resource> forNeighbour = mine.share();
                        mine.get().openHandles.addAndGet(2);
                        mailboxes.get(i).complete(forNeighbour);
                    }
                    Handle<Resource> received =
                            mailboxes.get((i + 1) % THREADS).get(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS);
                    Resource theirs = received.get();
                    theirs.openHandles.decrementAndGet();
                    received.close(); // detached: deferred
                    Resource own = mine.get();
                    own.openHandles.decrementAndGet();
                    if (i % 2 == 0) {
                        try (Attachment attached = pool.attach()) {
                            mine.close(); // attached: now
                        }
                    } else {
                        mine.close();
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        pool.attach().close();

        assertEquals(0, pool.stats().pendingDecrements());
        assertEquals(0, pool.stats().live());
        assertTrue(resources.createdCount() >= KEYS, "at least one object per key");
        resources.assertAllDisposedOnceAttached();
    }
}
