package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.refpool.core.TestResources.Resource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Thread leases under load: worker threads request a few hot keys (borrowing from their leases),
 * keep some handles open for a while and hand them to other threads to close, while a chaos thread
 * invalidates, clears idle objects and the real sweeper runs every few milliseconds. Afterwards
 * every object the factory made was disposed exactly once, never with a handle open (the disposer
 * checks), attached, and no error reached the listener. On top of {@link ThreadLeasesLincheckTest},
 * which explores the interleavings of fewer operations exhaustively.
 */
class ThreadLeasesStressTest {
    private static final int WORKERS = 3;
    private static final int REQUESTS = 20_000;
    private static final String[] KEYS = {"a", "b", "c", "d", "e", "f"};

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void everyObjectIsDisposedOnceUnderLeasesRevocationsAndSweeps(AttachMode mode) throws Exception {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(4))
                .threadLeases(Duration.ofMillis(5))
                .drainDelay(Duration.ofMillis(1)));
        pool.core().leasesForTests().leaseAtOnce();
        ConcurrentLinkedQueue<Handle<Resource>> handedOver = new ConcurrentLinkedQueue<>();
        AtomicBoolean done = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            long seed = w;
            threads.add(new Thread(
                    () -> {
                        SplittableRandom random = new SplittableRandom(seed);
                        try {
                            start.await();
                            for (int i = 0; i < REQUESTS; i++) {
                                String key = KEYS[Math.min(random.nextInt(KEYS.length), random.nextInt(KEYS.length))];
                                int what = random.nextInt(10);
                                if (what < 6) {
                                    try (Attachment attached = pool.attach();
                                            Handle<Resource> handle = pool.acquire(key)) {
                                        touch(handle.get());
                                    }
                                } else if (what < 8) {
                                    pool.call(key, r -> {
                                        touch(r);
                                        return null;
                                    });
                                } else {
                                    try (Attachment attached = pool.attach()) {
                                        Handle<Resource> handle = pool.acquire(key);
                                        handle.get().openHandles.incrementAndGet();
                                        handedOver.add(handle); // closed by another thread, attached or not
                                    }
                                }
                                Handle<Resource> other = handedOver.poll();
                                if (other != null) {
                                    other.get().openHandles.decrementAndGet();
                                    if (random.nextBoolean()) {
                                        other.close();
                                    } else {
                                        try (Attachment attached = pool.attach()) {
                                            other.close();
                                        }
                                    }
                                }
                            }
                        } catch (Throwable t) {
                            synchronized (failures) {
                                failures.add(t);
                            }
                        }
                    },
                    "lease-worker-" + w));
        }
        Thread chaos = new Thread(
                () -> {
                    SplittableRandom random = new SplittableRandom(42);
                    while (!done.get()) {
                        int what = random.nextInt(3);
                        if (what == 0) {
                            pool.invalidate(KEYS[random.nextInt(KEYS.length)]);
                        } else if (what == 1) {
                            pool.clearIdle();
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                },
                "lease-chaos");
        threads.forEach(Thread::start);
        chaos.start();
        start.countDown();
        for (Thread thread : threads) {
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
        done.set(true);
        chaos.join(TimeUnit.MINUTES.toMillis(1));
        assertEquals(List.of(), failures, "the workers failed");
        for (Handle<Resource> handle; (handle = handedOver.poll()) != null; ) {
            handle.get().openHandles.decrementAndGet();
            handle.close();
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    private static void touch(Resource resource) {
        resource.openHandles.incrementAndGet();
        resource.openHandles.decrementAndGet();
    }
}
