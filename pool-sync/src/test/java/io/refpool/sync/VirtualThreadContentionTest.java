package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.assertPermits;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * 10,000 virtual threads contending with blocking acquires all finish, and no carrier thread is
 * pinned while one of them waits for the lock: waiting parks with {@code LockSupport}, never inside
 * a monitor. Pinning is observed with JFR's {@code jdk.VirtualThreadPinned} event at a zero
 * threshold. The code compiles for Java 17, so virtual threads are started through a method handle.
 */
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads need Java 21 or newer")
class VirtualThreadContentionTest {
    private static final int THREADS = 10_000;
    private static final String PINNED = "jdk.VirtualThreadPinned";

    private static Thread startVirtual(Runnable body) throws Throwable {
        MethodHandle start = MethodHandles.publicLookup()
                .findStatic(Thread.class, "startVirtualThread", MethodType.methodType(Thread.class, Runnable.class));
        return (Thread) start.invoke(body);
    }

    /**
     * Runs {@code body} on {@link #THREADS} virtual threads under JFR; {@return the pinning events}.
     * Contended and uncontended acquires run first, so that the lock classes are initialized: a virtual thread
     * that waits for another thread's class initialization pins its carrier once, for the JVM's
     * reasons, not the lock's.
     */
    private static List<RecordedEvent> runRecordingPinning(Runnable body) throws Throwable {
        AsyncMutex warmUp = new AsyncMutex();
        assertTrue(warmUp.tryLock());
        java.util.concurrent.CompletableFuture<Guard> waiter = SyncTesting.waiting(warmUp.acquire());
        warmUp.unlock();
        SyncTesting.granted(waiter).close();
        warmUp.acquireBlocking().close();
        AsyncSemaphore permits = new AsyncSemaphore(1);
        permits.tryAcquire(1, Duration.ofSeconds(1)).orElseThrow().close();
        Path dump = Files.createTempFile("virtual-thread-pinning", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable(PINNED).withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            List<Thread> threads = new ArrayList<>(THREADS);
            for (int i = 0; i < THREADS; i++) {
                threads.add(startVirtual(body));
            }
            for (Thread t : threads) {
                t.join(TestKit.BOUND.toMillis());
                assertTrue(!t.isAlive(), "a virtual thread never finished");
            }
            recording.stop();
            recording.dump(dump);
            return RecordingFile.readAllEvents(dump);
        } finally {
            Files.deleteIfExists(dump);
        }
    }

    /** {@return the events whose stack runs through this library's locks} */
    private static List<String> pinnedInTheLocks(List<RecordedEvent> events) {
        return events.stream()
                .filter(e -> e.getEventType().getName().equals(PINNED))
                .filter(e -> e.getStackTrace() != null
                        && e.getStackTrace().getFrames().stream()
                                .map(RecordedFrame::getMethod)
                                .anyMatch(m -> m.getType().getName().startsWith("io.refpool.sync")))
                .map(RecordedEvent::toString)
                .collect(Collectors.toList());
    }

    @Test
    void tenThousandVirtualThreadsContendingOnTheMutexPinNoCarrier() throws Throwable {
        AsyncMutex mutex = new AsyncMutex();
        AtomicInteger inside = new AtomicInteger();
        int[] counter = {0};
        List<RecordedEvent> events = runRecordingPinning(() -> {
            try (Guard guard = mutex.acquireBlocking()) {
                if (inside.incrementAndGet() != 1) {
                    throw new AssertionError("two owners");
                }
                counter[0]++;
                Thread.yield(); // give the others a chance to queue behind
                inside.decrementAndGet();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        assertEquals(THREADS, counter[0]);
        assertEquals(List.of(), pinnedInTheLocks(events));
        assertFreeAndUsable(mutex);
    }

    @Test
    void tenThousandVirtualThreadsContendingOnTheSemaphorePinNoCarrier() throws Throwable {
        AsyncSemaphore semaphore = new AsyncSemaphore(3);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<RecordedEvent> events = runRecordingPinning(() -> {
            try (Guard guard = semaphore.tryAcquire(2, Duration.ofSeconds(60)).orElseThrow()) {
                if (inside.addAndGet(2) > 3) {
                    throw new AssertionError("more permits handed out than exist");
                }
                Thread.yield();
                inside.addAndGet(-2);
                done.incrementAndGet();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        assertEquals(THREADS, done.get());
        assertEquals(List.of(), pinnedInTheLocks(events));
        assertPermits(semaphore, 3);
    }

    @Test
    void virtualThreadWaitingForTheLockUnmountsItsCarrier() throws Throwable {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        AtomicInteger acquired = new AtomicInteger();
        Thread waiter = startVirtual(() -> {
            try (Guard guard = mutex.acquireBlocking()) {
                acquired.incrementAndGet();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        SyncTesting.awaitQueued(mutex, 1);
        TestKit.eventually().until(() -> waiter.getState() == Thread.State.WAITING);

        mutex.unlock();

        waiter.join(TestKit.BOUND.toMillis());
        assertEquals(1, acquired.get());
        assertFreeAndUsable(mutex);
    }
}
