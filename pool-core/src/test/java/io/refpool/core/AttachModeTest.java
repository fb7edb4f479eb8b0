package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The gate. {@code GLOBAL}: never two threads attached at once. {@code SHARED}: many at once,
 * and {@code exclusive()} waits for all of them and keeps newcomers out while it runs.
 * {@code attachAsync} runs its function attached and gives the gate back whether the function
 * returns or throws; a cancelled wait leaves the gate free.
 */
class AttachModeTest {
    private static final int CONTENDERS = 4;
    private static final int ATTACHES_EACH = 5_000;

    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(AttachMode mode) {
        return resources.build(resources.builder().attachMode(mode).drainDelay(Duration.ofHours(1)));
    }

    /** Asserts that another thread attaches without waiting for anyone. */
    private static void assertGateFree(RefPool<String, Resource> pool) throws Exception {
        assertFalse(pool.isAttached(), "the test thread is not attached");
        forkRun("newcomer", () -> pool.attach().close()).join();
    }

    @Test
    void exclusiveModeNeverHasTwoThreadsAttachedUnderContention() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(CONTENDERS);
        List<Forked<Void>> contenders = new ArrayList<>();
        for (int t = 0; t < CONTENDERS; t++) {
            contenders.add(forkRun("contender-" + t, () -> {
                start.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS);
                for (int i = 0; i < ATTACHES_EACH; i++) {
                    try (Attachment attached = pool.attach()) {
                        int now = inside.incrementAndGet();
                        mostInside.accumulateAndGet(now, Math::max);
                        try (Attachment nested = pool.attach()) {
                            Thread.yield(); // give another thread every chance to get in
                        }
                        inside.decrementAndGet();
                    }
                }
            }));
        }
        for (Forked<Void> contender : contenders) {
            contender.join();
        }
        assertEquals(1, mostInside.get(), "threads attached at once in GLOBAL mode");
        assertGateFree(pool);
    }

    @Test
    void sharedModeAdmitsManyThreadsAtOnce() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        CyclicBarrier allAttached = new CyclicBarrier(CONTENDERS);
        List<Forked<Void>> threads = new ArrayList<>();
        for (int t = 0; t < CONTENDERS; t++) {
            threads.add(forkRun("shared-" + t, () -> {
                try (Attachment attached = pool.attach();
                        Handle<Resource> handle = pool.acquire("common")) {
                    // only passes if every thread is attached at the same time
                    allAttached.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS);
                }
            }));
        }
        for (Forked<Void> thread : threads) {
            thread.join();
        }
        assertEquals(1, resources.createdCount(), "one object for the key, however many attached acquirers");
        assertGateFree(pool);
    }

    @Test
    void exclusiveWaitsForEveryAttachedThreadAndKeepsNewcomersOut() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        AtomicInteger sharedInside = new AtomicInteger();
        AtomicInteger exclusiveInside = new AtomicInteger();
        CountDownLatch readersIn = new CountDownLatch(CONTENDERS);
        List<CountDownLatch> leave = new ArrayList<>();
        List<Forked<Void>> readers = new ArrayList<>();
        for (int t = 0; t < CONTENDERS; t++) {
            CountDownLatch mayLeave = new CountDownLatch(1);
            leave.add(mayLeave);
            readers.add(forkRun("reader-" + t, () -> {
                try (Attachment attached = pool.attach()) {
                    sharedInside.incrementAndGet();
                    readersIn.countDown();
                    assertTrue(mayLeave.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS));
                    sharedInside.decrementAndGet();
                }
            }));
        }
        assertTrue(readersIn.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS));

        CountDownLatch exclusiveMayLeave = new CountDownLatch(1);
        Forked<Integer> writer = fork("writer", () -> {
            try (Attachment stopTheWorld = pool.stopTheWorld()) {
                exclusiveInside.incrementAndGet();
                int readersSeen = sharedInside.get();
                assertTrue(pool.isAttached(), "the exclusive thread counts as attached");
                pool.acquire("exclusive-work").close();
                assertTrue(exclusiveMayLeave.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS));
                exclusiveInside.decrementAndGet();
                return readersSeen;
            }
        });
        awaitParked(writer.thread);
        Forked<Integer> newcomer = fork("newcomer", () -> {
            try (Attachment attached = pool.attach()) {
                return exclusiveInside.get();
            }
        });
        awaitParked(newcomer.thread); // behind the waiting writer, although readers are in

        for (int t = 0; t < CONTENDERS; t++) {
            assertFalse(writer.outcome.isDone(), "the writer went in while a reader was attached");
            leave.get(t).countDown();
            readers.get(t).join();
        }
        TestKit.eventually().alias("the writer is in").until(() -> exclusiveInside.get() == 1);
        assertFalse(newcomer.outcome.isDone(), "a newcomer went in during the exclusive section");

        exclusiveMayLeave.countDown();
        assertEquals(0, writer.join(), "readers attached while the exclusive section ran");
        assertEquals(0, newcomer.join(), "the newcomer was attached during the exclusive section");
        assertGateFree(pool);
    }

    @Test
    void exclusiveOnAThreadAttachedSharedFailsInsteadOfWaitingForItself() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.SHARED);
        try (Attachment attached = pool.attach()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, pool::stopTheWorld);
            assertTrue(e.getMessage().contains("wait for itself"), e.getMessage());
            assertTrue(pool.isAttached());
        }
        assertGateFree(pool);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void attachAsyncRunsAttachedAndDetachesWhenTheFunctionReturns(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        CompletableFuture<Resource> result = pool.attachAsync(CancellationToken.none(), attachment -> {
                    assertTrue(pool.isAttached());
                    try (Handle<Resource> handle = pool.acquire("a")) {
                        return handle.get();
                    }
                })
                .toCompletableFuture();

        assertSame(resources.created("a"), result.join());
        assertFalse(pool.isAttached());
        assertEquals(1, resources.disposalCount(), "the handle closed attached, inside the function");
        assertGateFree(pool);
        resources.assertAllDisposedOnceAttached();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void attachAsyncDetachesWhenTheFunctionThrows(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        IllegalArgumentException thrown = new IllegalArgumentException("the function failed");
        CompletableFuture<Object> result = pool.attachAsync(CancellationToken.none(), attachment -> {
                    pool.attach(); // a nested scope the function leaves open
                    throw thrown;
                })
                .toCompletableFuture();

        CompletionException e = assertThrows(CompletionException.class, result::join);
        assertSame(thrown, e.getCause());
        assertFalse(pool.isAttached(), "the function's scopes ended with it");
        assertGateFree(pool);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void attachAsyncWaitsWithoutParkingAndRunsOnTheThreadThatFreesTheGate(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletableFuture<Boolean> result;
        try (Attachment held = pool.stopTheWorld()) {
            result = fork("async caller", () -> pool.attachAsync(CancellationToken.none(), attachment -> {
                                ranOn.set(Thread.currentThread());
                                return pool.isAttached();
                            })
                            .toCompletableFuture())
                    .join(); // returns at once: the caller does not park
            assertFalse(result.isDone(), "the function waits for the gate");
        }
        assertTrue(result.join(), "the function ran attached");
        assertSame(Thread.currentThread(), ranOn.get(), "it ran on the thread that gave the gate up");
        assertFalse(pool.isAttached());
        assertGateFree(pool);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCancelledAttachLeavesTheGateFree(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        CancellationSource cancel = new CancellationSource();
        Forked<Void> waiter;
        try (Attachment held = pool.stopTheWorld()) {
            waiter = forkRun("waiter", () -> pool.attach(cancel.token()).close());
            awaitParked(waiter.thread);
            cancel.cancel();
            assertInstanceOf(CancellationException.class, waiter.joinFailure());
        }
        assertGateFree(pool);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCancelledAttachAsyncLeavesTheGateFreeAndNeverRunsTheFunction(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = pool(mode);
        CancellationSource cancel = new CancellationSource();
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Integer> result;
        try (Attachment held = pool.stopTheWorld()) {
            result = fork("async caller", () -> pool.attachAsync(cancel.token(), attachment -> runs.incrementAndGet())
                            .toCompletableFuture())
                    .join();
            cancel.cancel();
            TestKit.joinedCancellation(result);
        }
        assertEquals(0, runs.get());
        assertGateFree(pool);
    }

    @Test
    void anInterruptedAttachKeepsTheInterruptAndLeavesTheGateFree() throws Exception {
        RefPool<String, Resource> pool = pool(AttachMode.GLOBAL);
        Forked<Boolean> waiter;
        try (Attachment held = pool.attach()) {
            waiter = fork("waiter", () -> {
                try {
                    pool.attach().close();
                    return false;
                } catch (WaitInterruptedException e) {
                    return Thread.currentThread().isInterrupted();
                }
            });
            awaitParked(waiter.thread);
            waiter.thread.interrupt();
            assertTrue(waiter.join(), "the attach failed and kept the interrupt status");
        }
        assertGateFree(pool);
    }
}
