package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * {@link AsyncSharedMutex} on virtual threads: many more blocked readers and writers than carrier
 * threads all complete, because a waiter parks with {@code LockSupport} and never pins its carrier.
 * The code is compiled for Java 17, so the virtual-thread executor is looked up reflectively.
 */
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads need Java 21 or newer")
class AsyncSharedMutexVirtualThreadTest {
    private static final int READERS = 2_000;
    private static final int WRITERS = 50;
    private static final int ROUNDS = 20;

    private static ExecutorService newVirtualThreadPerTaskExecutor() throws Throwable {
        MethodHandle factory = MethodHandles.publicLookup()
                .findStatic(
                        java.util.concurrent.Executors.class,
                        "newVirtualThreadPerTaskExecutor",
                        MethodType.methodType(ExecutorService.class));
        return (ExecutorService) factory.invoke();
    }

    @Test
    void manyVirtualReadersAndSomeWritersAllComplete() throws Throwable {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        AtomicInteger readersInside = new AtomicInteger();
        AtomicInteger writersInside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger sections = new AtomicInteger();

        List<Future<?>> tasks = new ArrayList<>();
        ExecutorService executor = newVirtualThreadPerTaskExecutor();
        try {
            for (int i = 0; i < READERS + WRITERS; i++) {
                boolean writer = i % ((READERS + WRITERS) / WRITERS) == 0;
                tasks.add(executor.submit(() -> {
                    for (int round = 0; round < ROUNDS; round++) {
                        if (writer) {
                            try (Guard g = lock.acquireBlocking()) {
                                if (writersInside.incrementAndGet() != 1 || readersInside.get() != 0) {
                                    overlaps.incrementAndGet();
                                }
                                Thread.yield(); // let other virtual threads run into the held lock
                                writersInside.decrementAndGet();
                            }
                        } else {
                            try (Guard g = lock.acquireSharedBlocking()) {
                                readersInside.incrementAndGet();
                                if (writersInside.get() != 0) {
                                    overlaps.incrementAndGet();
                                }
                                Thread.yield();
                                readersInside.decrementAndGet();
                            }
                        }
                        sections.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> task : tasks) {
                task.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        }

        assertEquals(0, overlaps.get(), "a writer overlapped readers or another writer");
        assertEquals((READERS + WRITERS) * ROUNDS, sections.get());
        assertFree(lock);
    }
}
