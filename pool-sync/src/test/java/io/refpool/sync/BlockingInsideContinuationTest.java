package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static io.refpool.sync.SyncTesting.assertPermits;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A continuation that releases the lock and then waits for it with a blocking acquire, on the
 * thread that settled it, is not deadlocked by the settles that its own release deferred: before a
 * thread parks it runs the settles it deferred, so the waiters granted meanwhile get their turn
 * and release in order. (The wait is bounded here, so that a deadlock fails the test instead of
 * hanging it.)
 */
class BlockingInsideContinuationTest {
    @Test
    void continuationThatReleasesThenBlocksOnTheSameMutexGetsItAfterTheWaitersGrantedMeanwhile() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> blocking = mutex.acquire()
                .thenAccept(guard -> {
                    order.add("first");
                    guard.close(); // grants the next waiter; its continuation is deferred on this thread
                    Optional<Guard> again = tryAcquireBounded(mutex);
                    order.add(again.isPresent() ? "first again" : "first timed out");
                    again.ifPresent(Guard::close);
                })
                .toCompletableFuture();
        mutex.acquire().thenAccept(guard -> {
            order.add("second");
            guard.close();
        });

        mutex.unlock();

        blocking.join();
        assertEquals(List.of("first", "second", "first again"), order);
        assertFreeAndUsable(mutex);
    }

    @Test
    void continuationThatReleasesThenBlocksOnTheSameSemaphoreGetsItsPermits() throws Exception {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 2);
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> blocking = semaphore
                .acquire(2)
                .thenAccept(guard -> {
                    order.add("first");
                    guard.close();
                    try {
                        Optional<Guard> again = semaphore.tryAcquire(2, TestKit.BOUND);
                        order.add(again.isPresent() ? "first again" : "first timed out");
                        again.ifPresent(Guard::close);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                })
                .toCompletableFuture();
        semaphore.acquire(2).thenAccept(guard -> {
            order.add("second");
            guard.close();
        });

        semaphore.release(2);

        blocking.join();
        assertEquals(List.of("first", "second", "first again"), order);
        assertPermits(semaphore, 2);
    }

    /**
     * A continuation that releases and then blocks on something this package does not see (here a
     * latch the next waiter's continuation opens) has the completion its release causes run first,
     * {@link Continuations#releaseNow(Runnable)}; with a plain close, the next waiter owns the mutex without
     * being told for as long as the continuation blocks.
     */
    @Test
    void continuationThatReleasesThenBlocksElsewhereSettlesWhatItDeferredFirst() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        java.util.concurrent.CountDownLatch secondRan = new java.util.concurrent.CountDownLatch(1);
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> blocking = mutex.acquire()
                .thenAccept(guard -> {
                    order.add("first");
                    Continuations.releaseNow(guard::close); // grants the next waiter, told at once
                    try {
                        order.add(
                                secondRan.await(TestKit.BOUND.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)
                                        ? "first saw second"
                                        : "first timed out");
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                })
                .toCompletableFuture();
        mutex.acquire().thenAccept(guard -> {
            order.add("second");
            guard.close();
            secondRan.countDown();
        });

        mutex.unlock();

        blocking.join();
        assertEquals(List.of("first", "second", "first saw second"), order);
        assertFreeAndUsable(mutex);
    }

    /**
     * Only what the release itself causes is settled at once: a completion the continuation
     * deferred before (here the waiter of another mutex it closed plainly) still waits for the
     * continuation's end, as it would without the call.
     */
    @Test
    void releaseNowSettlesOnlyWhatItsReleaseCauses() {
        Deferring scene = new Deferring();
        scene.released.acquire().thenAccept(guard -> {
            scene.order.add("released's waiter");
            guard.close();
        });
        scene.runOuterContinuation(() -> scene.order.add("continuation goes on"));

        assertEquals(List.of("released's waiter", "continuation goes on", "other's waiter"), scene.order);
        scene.assertAllFreeAndUsable();
    }

    /**
     * What {@code releaseNow} leaves deferred is still run by a blocking acquire before it parks:
     * here the continuation its release runs blocks on the mutex whose waiter the outer
     * continuation granted before, plainly, and that waiter must get its turn and let it go.
     */
    @Test
    void aBlockingAcquireInsideReleaseNowStillRunsWhatWasDeferredBefore() throws Exception {
        Deferring scene = new Deferring();
        scene.released.acquire().thenAccept(guard -> {
            Optional<Guard> again = tryAcquireBounded(scene.other); // parks: the deferred waiter runs first
            scene.order.add(again.isPresent() ? "released's waiter took other" : "released's waiter timed out");
            again.ifPresent(Guard::close);
            guard.close();
        });
        scene.runOuterContinuation(() -> {});

        assertEquals(List.of("other's waiter", "released's waiter took other"), scene.order);
        scene.assertAllFreeAndUsable();
    }

    /**
     * The waiters one release serves are settled as a batch before any of their continuations
     * runs, also when a blocking acquire inside {@code releaseNow}'s release settles them: here
     * the first waiter's continuation grants a third, which must come after the second.
     */
    @Test
    void aBatchSetAsideByReleaseNowIsSettledWholeBeforeItsContinuationsGrantMore() throws Exception {
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        AsyncMutex outer = new AsyncMutex();
        AsyncMutex third = new AsyncMutex();
        AsyncMutex held = new AsyncMutex();
        AsyncSemaphore semaphore = new AsyncSemaphore(2);
        assertTrue(semaphore.tryAcquirePermits(2));
        assertTrue(outer.tryLock());
        assertTrue(third.tryLock());
        Thread main = Thread.currentThread();
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        TestKit.Forked<Void> holder = TestKit.forkRun("holder", () -> {
            assertTrue(held.tryLock());
            holding.countDown();
            TestKit.awaitParked(main); // in the blocking acquire below
            held.unlock();
        });
        assertTrue(holding.await(TestKit.BOUND.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
        semaphore.acquire(1).thenAccept(guard -> {
            order.add("w1");
            third.unlock(); // grants w3
        });
        semaphore.acquire(1).thenAccept(guard -> order.add("w2"));
        third.acquire().thenAccept(guard -> order.add("w3"));
        outer.acquire().thenAccept(guard -> {
            semaphore.release(2); // w1 and w2, one batch, deferred: this thread runs a continuation
            Continuations.releaseNow(() -> {
                guard.close();
                try {
                    held.acquireBlocking().close(); // settles what was deferred before it parks
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
        });

        outer.unlock();

        holder.join();
        assertEquals(List.of("w1", "w2", "w3"), order);
    }

    /**
     * A blocking acquire inside continuations nested by {@code releaseNow}, whose deferred grants,
     * as it runs them before parking, start a chain of twenty more {@code releaseNow} calls: each
     * sets a queue aside and takes it back on the same list of set-aside queues that the blocking
     * acquire walks. Before, the walk failed with a {@code ConcurrentModificationException} once
     * that list grew; now the acquire times out as it should and every grant is delivered.
     */
    @Test
    void aBlockingAcquireWhoseDeferredGrantsCallReleaseNowAgainRunsThemAll() {
        AsyncMutex m0 = new AsyncMutex();
        AsyncMutex m1 = new AsyncMutex();
        AsyncMutex m2 = new AsyncMutex();
        AsyncMutex q0 = new AsyncMutex();
        AsyncMutex q1 = new AsyncMutex();
        AsyncMutex chain = new AsyncMutex();
        AsyncMutex blocked = new AsyncMutex();
        Guard held0 = m0.tryAcquire().orElseThrow();
        Guard held1 = m1.tryAcquire().orElseThrow();
        Guard held2 = m2.tryAcquire().orElseThrow();
        Guard heldQ0 = q0.tryAcquire().orElseThrow();
        Guard heldQ1 = q1.tryAcquire().orElseThrow();
        Guard heldChain = chain.tryAcquire().orElseThrow();
        Guard heldBlocked = blocked.tryAcquire().orElseThrow();
        List<String> order = new ArrayList<>();
        int[] chained = {0};
        for (int i = 0; i < 20; i++) {
            chain.acquire().thenAccept(guard -> {
                Continuations.releaseNow(guard::close);
                chained[0]++;
            });
        }
        q0.acquire().thenAccept(guard -> {
            order.add("q0");
            Continuations.releaseNow(heldChain::close); // the chain of twenty
            guard.close();
        });
        q1.acquire().thenAccept(guard -> {
            order.add("q1");
            guard.close();
        });
        m0.acquire().thenAccept(guard -> {
            heldQ0.close(); // deferred
            Continuations.releaseNow(held1::close);
            guard.close();
        });
        m1.acquire().thenAccept(guard -> {
            heldQ1.close(); // deferred
            Continuations.releaseNow(held2::close);
            guard.close();
        });
        CompletableFuture<Optional<Guard>> innermost = m2.acquire()
                .thenApply(guard -> {
                    try {
                        return blocked.tryAcquire(Duration.ofMillis(50)); // parks: runs q0's and q1's grants first
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    } finally {
                        guard.close();
                    }
                })
                .toCompletableFuture();
        held0.close();
        assertEquals(Optional.empty(), innermost.join(), "the acquire timed out: blocked stays held");
        assertEquals(List.of("q0", "q1"), order);
        assertEquals(20, chained[0]);
        heldBlocked.close();
        for (AsyncMutex mutex : List.of(m0, m1, m2, q0, q1, chain, blocked)) {
            assertFreeAndUsable(mutex);
        }
    }

    /**
     * A continuation whose close deferred a grant, then a blocking exclusive acquire of a
     * reader-biased lock that a reader on another thread holds: the deferred waiter's continuation
     * itself acquires that lock exclusively. It runs before this thread takes the lock, so it gets
     * it first, once the reader leaves, and then this thread does. Before, this thread took the lock
     * first and ran the deferred continuation while waiting for the reader; that continuation then
     * waited for this thread's hold, on this thread, for ever (its token ends that here).
     */
    @Test
    void aBlockingExclusiveAcquireOfAReaderBiasedLockRunsDeferredGrantsBeforeTakingIt() throws Exception {
        ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();
        AsyncMutex mutex = new AsyncMutex();
        CancellationSource breaker = new CancellationSource();
        breaker.cancelAfter(TestKit.BOUND);
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        TestKit.Forked<Void> reader = TestKit.forkRun("reader", () -> {
            assertTrue(lock.tryLockShared());
        });
        reader.join();
        Thread continuing = Thread.currentThread();
        TestKit.Forked<Void> leaver = TestKit.forkRun("leaver", () -> {
            TestKit.awaitParked(continuing); // an exclusive acquire waits for the reader
            lock.unlockShared();
        });
        Guard held = mutex.tryAcquire().orElseThrow();
        CompletableFuture<Void> continuation = mutex.acquire()
                .thenAccept(guard -> {
                    queueWaiterThatBlocks(mutex, () -> lock.acquireBlocking(breaker.token()), order);
                    guard.close(); // grants it: deferred
                    acquireExclusively(lock, order);
                })
                .toCompletableFuture();
        held.close(); // runs the continuation here
        continuation.join();
        leaver.join();
        breaker.close();
        assertEquals(List.of("deferred waiter", "continuation"), order);
        assertFreeAndUsable(mutex);
        assertTrue(lock.tryLock(), "free");
        lock.unlock();
    }

    /**
     * The same acquire on a free lock with no reader takes it at once and runs no deferred grant
     * in place: the deferred waiter here blocks on a mutex the continuation still holds, so run
     * under this call it would wait for this very thread. It runs when the continuation ends.
     */
    @Test
    void anUncontendedBlockingExclusiveAcquireOfAReaderBiasedLockRunsNoDeferredGrant() throws Exception {
        ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();
        AsyncMutex held = new AsyncMutex();
        AsyncMutex mutex = new AsyncMutex();
        CancellationSource breaker = new CancellationSource();
        breaker.cancelAfter(TestKit.BOUND);
        List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        Guard outer = mutex.tryAcquire().orElseThrow();
        CompletableFuture<Void> continuation = mutex.acquire()
                .thenAccept(guard -> {
                    Guard mine = held.tryAcquire().orElseThrow();
                    queueWaiterThatBlocks(mutex, () -> held.acquireBlocking(breaker.token()), order);
                    guard.close(); // grants it: deferred
                    acquireExclusively(lock, order);
                    mine.close();
                })
                .toCompletableFuture();
        outer.close(); // runs the continuation here
        continuation.join();
        breaker.close();
        assertEquals(List.of("continuation", "deferred waiter"), order);
        assertFreeAndUsable(mutex);
        assertFreeAndUsable(held);
        assertTrue(lock.tryLock(), "free");
        lock.unlock();
    }

    /** A blocking acquire, for {@link #queueWaiterThatBlocks}. */
    private interface BlockingAcquire {
        Guard acquire() throws InterruptedException;
    }

    /**
     * Queues a waiter on {@code mutex} whose continuation takes {@code blocking}, notes in {@code
     * order} that it got it (or how its wait ended), and gives both back.
     */
    private static void queueWaiterThatBlocks(AsyncMutex mutex, BlockingAcquire blocking, List<String> order) {
        mutex.acquire().thenAccept(next -> {
            try (Guard taken = blocking.acquire()) {
                order.add("deferred waiter");
            } catch (InterruptedException | RuntimeException e) {
                order.add("deferred waiter: " + e);
            }
            next.close();
        });
    }

    /** Takes {@code lock} exclusively, blocking, notes it in {@code order} as the continuation's, and gives it back. */
    private static void acquireExclusively(ReaderBiasedSharedMutex lock, List<String> order) {
        try (Guard exclusive = lock.acquireBlocking()) {
            order.add("continuation");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Three mutexes for a continuation that defers one grant and releases another through {@code
     * releaseNow}: {@code outer} locked (its waiter is the continuation), {@code other} and {@code
     * released} held, and a waiter on {@code other} that records its turn in {@code order}.
     */
    private static final class Deferring {
        final AsyncMutex outer = new AsyncMutex();
        final AsyncMutex other = new AsyncMutex();
        final AsyncMutex released = new AsyncMutex();
        final Guard otherHeld;
        final Guard releasedHeld;
        final List<String> order = new ArrayList<>();

        Deferring() {
            assertTrue(outer.tryLock());
            otherHeld = other.tryAcquire().orElseThrow();
            releasedHeld = released.tryAcquire().orElseThrow();
            other.acquire().thenAccept(guard -> {
                order.add("other's waiter");
                guard.close();
            });
        }

        /**
         * Runs the outer mutex's waiter as a continuation (the test thread unlocks it): it closes
         * {@code otherHeld} plainly, deferred, then {@code releasedHeld} through {@code releaseNow},
         * then runs {@code then}; returns when it ended.
         */
        void runOuterContinuation(Runnable then) {
            CompletableFuture<Void> continuation = outer.acquire()
                    .thenAccept(guard -> {
                        otherHeld.close(); // deferred: this thread runs a continuation
                        Continuations.releaseNow(releasedHeld::close);
                        then.run();
                        guard.close();
                    })
                    .toCompletableFuture();
            outer.unlock();
            continuation.join();
        }

        void assertAllFreeAndUsable() {
            assertFreeAndUsable(outer);
            assertFreeAndUsable(other);
            assertFreeAndUsable(released);
        }
    }

    private static Optional<Guard> tryAcquireBounded(AsyncMutex mutex) {
        try {
            return mutex.tryAcquire(TestKit.BOUND);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
