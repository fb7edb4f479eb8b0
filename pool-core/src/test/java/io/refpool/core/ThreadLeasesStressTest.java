package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Thread leases under load: worker threads request a few hot keys (borrowing from their leases),
 * keep some handles open for a while and hand them to other threads to close, while a chaos thread
 * invalidates, clears idle objects and the real sweeper runs every few milliseconds. In the bounded
 * run the pool also has fewer permits than keys and a validator that refuses some revivals, and the
 * workers wait in line with {@code acquireAsync}. Afterwards every waiter was served, every object
 * the factory made was disposed exactly once, never with a handle open (the disposer checks),
 * attached, and no error reached the listener. On top of {@link ThreadLeasesLincheckTest} and
 * {@link ThreadLeasesBoundedLincheckTest}, which explore fewer operations exhaustively.
 */
class ThreadLeasesStressTest {
    private static final int WORKERS = 3;
    private static final int REQUESTS = 20_000;
    private static final String[] KEYS = {"a", "b", "c", "d", "e", "f"};

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void everyObjectIsDisposedOnceUnderLeasesRevocationsAndSweeps(AttachMode mode) throws Exception {
        TestResources resources = new TestResources();
        run(resources, resources.builder().attachMode(mode).idle(cache -> cache.maximumSize(4)), false);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void leasesGiveWayToTheBoundAndToChecksUnderLoad(AttachMode mode) throws Exception {
        TestResources resources = new TestResources();
        SplittableRandom verdicts = new SplittableRandom(7);
        run(
                resources,
                resources
                        .builder()
                        .attachMode(mode)
                        .maxObjects(3)
                        .idle(cache -> cache.maximumSize(2))
                        .validator((key, resource) -> {
                            synchronized (verdicts) {
                                return verdicts.nextInt(8) != 0;
                            }
                        }),
                true);
    }

    private static void run(TestResources resources, RefPool.Builder<String, Resource> builder, boolean bounded)
            throws Exception {
        RefPool<String, Resource> pool =
                resources.build(builder.threadLeases(Duration.ofMillis(5)).drainDelay(Duration.ofMillis(1)));
        pool.core().leasesForTests().leaseAtOnce();
        ConcurrentLinkedQueue<CompletableFuture<Void>> waits = new ConcurrentLinkedQueue<>();
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
                                try {
                                    if (bounded && what == 9) {
                                        waits.add(pool.acquireAsync(key, CancellationToken.none())
                                                .thenAccept(handle -> {
                                                    touch(handle.get());
                                                    handle.close(); // off the attachment: pending
                                                })
                                                .toCompletableFuture());
                                    } else {
                                        request(pool, key, what, handedOver);
                                    }
                                } catch (CapacityExhaustedException busy) {
                                    // every permit is in use by open handles: an attached acquire fails fast
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
        for (CompletableFuture<Void> wait : waits) {
            wait.get(1, TimeUnit.MINUTES); // served once the handles closed: no lease kept a permit
        }
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /** Six in ten: a request; two: a call; the rest: a handle kept open for another thread to close. */
    private static void request(
            RefPool<String, Resource> pool, String key, int what, ConcurrentLinkedQueue<Handle<Resource>> handedOver) {
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
    }

    private static void touch(Resource resource) {
        resource.openHandles.incrementAndGet();
        resource.openHandles.decrementAndGet();
    }
}
