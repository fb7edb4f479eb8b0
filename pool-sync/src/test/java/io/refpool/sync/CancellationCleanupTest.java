package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** Unregistered callbacks leave a long-lived source's list, and only they do. */
class CancellationCleanupTest {

    @Test
    void registerAfterAnUnregisterUnlinksTheUnregisteredTop() {
        CancellationSource source = new CancellationSource();
        Registration longLived = source.token().register(() -> {});

        for (int i = 0; i < 1_000; i++) {
            Registration shortLived = source.token().register(() -> {});
            assertTrue(shortLived.unregister());
            assertTrue(source.linkedNodeCount() <= 2, "step " + i + ": " + source.linkedNodeCount() + " linked");
        }

        assertEquals(1, source.registrationCount());
        assertTrue(longLived.unregister());
    }

    @Test
    void unregisteredNodesLeaveTheListWhateverTheOrder() {
        CancellationSource source = new CancellationSource();
        Random random = new Random(42);
        List<Registration> live = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            live.add(source.token().register(() -> {}));
        }

        for (int i = 0; i < 100_000; i++) {
            int victim = random.nextInt(live.size());
            assertTrue(live.get(victim).unregister());
            live.set(victim, source.token().register(() -> {}));
            int linked = source.linkedNodeCount();
            assertTrue(
                    linked <= 100 + 50 + CancellationSource.MIN_SWEEP_BACKLOG,
                    "step " + i + ": " + linked + " nodes linked for 100 live registrations");
        }

        assertEquals(100, source.registrationCount());
    }

    @Test
    void sweepingKeepsEveryLiveCallbackAndItsOrder() {
        CancellationSource source = new CancellationSource();
        List<Integer> ran = new ArrayList<>();
        List<Registration> registrations = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            int id = i;
            registrations.add(source.token().register(() -> ran.add(id)));
        }
        List<Integer> removalOrder = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            removalOrder.add(i);
        }
        Collections.shuffle(removalOrder, new Random(7));
        List<Integer> removed = removalOrder.subList(0, 700);
        for (int id : removed) {
            assertTrue(registrations.get(id).unregister());
        }

        source.cancel();

        List<Integer> expected = new ArrayList<>();
        for (int i = 999; i >= 0; i--) {
            if (!removed.contains(i)) {
                expected.add(i);
            }
        }
        assertEquals(expected, ran);
    }

    @Test
    void concurrentChurnKeepsTheLongLivedCallbacksAndFreesTheRest() throws Exception {
        CancellationSource source = new CancellationSource();
        int longLived = 32;
        AtomicIntegerArray runs = new AtomicIntegerArray(longLived);
        for (int i = 0; i < longLived; i++) {
            int id = i;
            source.token().register(() -> runs.incrementAndGet(id));
        }
        int threads = 2;
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> churners = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                churners.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    List<Registration> mine = new ArrayList<>();
                    for (int i = 0; i < 50_000; i++) {
                        mine.add(source.token().register(() -> {
                            throw new AssertionError("an unregistered callback ran");
                        }));
                        if (mine.size() == 8) {
                            for (Registration registration : mine) {
                                assertTrue(registration.unregister());
                            }
                            mine.clear();
                        }
                    }
                    for (Registration registration : mine) {
                        assertTrue(registration.unregister());
                    }
                    return null;
                }));
            }
            for (Future<?> churner : churners) {
                churner.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals(longLived, source.registrationCount());
        assertTrue(source.linkedNodeCount() <= longLived + longLived / 2 + CancellationSource.MIN_SWEEP_BACKLOG + 8);
        source.cancel();
        for (int i = 0; i < longLived; i++) {
            assertEquals(1, runs.get(i), "long-lived callback " + i);
        }
    }
}
