package io.refpool.sync;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.unstarted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.refpool.sync.ReaderBiasedSharedMutex.Point;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The races of {@link ReaderBiasedSharedMutex}'s reader-writer handshake, each forced at a named
 * point of the protocol with latches: a reader arriving while a writer revokes the bias, the last
 * reader leaving while the writer publishes its drain, a writer's wait cancelled while it drains,
 * a hold left on another thread, and a hold whose thread died.
 */
class ReaderBiasedSharedMutexRaceTest {
    private final ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();

    /** Pauses the thread {@code who} names at {@code point}, once, until {@code resume} opens. */
    private static final class Pause {
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        final AtomicReference<Thread> who = new AtomicReference<>();
        final Point point;

        Pause(Point point) {
            this.point = point;
        }

        void at(Point p) {
            if (p == point && who.get() == Thread.currentThread() && reached.getCount() > 0) {
                reached.countDown();
                try {
                    assertTrue(resume.await(BOUND.toMillis(), TimeUnit.MILLISECONDS), "never resumed");
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
        }

        void awaitReached() throws InterruptedException {
            assertTrue(reached.await(BOUND.toMillis(), TimeUnit.MILLISECONDS), point + " never reached");
        }
    }

    @Test
    void readerArrivingDuringRevocationBacksOutAndGrantsTheWriter() throws Exception {
        Pause pause = new Pause(Point.READER_ANNOUNCED);
        lock.hooks = pause::at;
        Forked<Boolean> reader = unstarted("announced reader", lock::tryLockShared);
        pause.who.set(reader.thread);
        reader.start();
        pause.awaitReached(); // counted in its stripe, not yet looking for a writer

        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture();
        assertFalse(writer.isDone(), "the writer must wait for the announced reader");
        assertTrue(lock.isWriteLocked());

        AtomicReference<Thread> grantedOn = new AtomicReference<>();
        CompletableFuture<Guard> observed = writer.whenComplete((g, f) -> grantedOn.set(Thread.currentThread()));
        pause.resume.countDown();

        assertFalse(reader.join(), "the reader sees the writer and backs out");
        Guard exclusive = observed.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertSame(reader.thread, grantedOn.get(), "the reader backing out granted the writer");
        assertFalse(lock.tryLockShared(), "no reader while the writer holds");
        assertFalse(lock.tryLockSharedUnbiased(), "nor through the word");
        exclusive.close();
        if (lock.tryLockShared()) {
            lock.unlockShared();
        } else {
            assertTrue(lock.tryLockSharedUnbiased(), "still inside the inhibit window: through the word");
            lock.unlockSharedUnbiased();
        }
        assertEquals(0, lock.readers());
    }

    @Test
    void lastReaderLeavingBeforeTheDrainIsPublishedIsSeenByTheRescan() throws Exception {
        assertTrue(lock.tryLockShared());
        Pause pause = new Pause(Point.DRAIN_PUBLISHING);
        lock.hooks = pause::at;
        Forked<Guard> writer =
                unstarted("writer", () -> lock.acquire().toCompletableFuture().join());
        pause.who.set(writer.thread);
        writer.start();
        pause.awaitReached(); // found the reader, has not published its drain

        lock.unlockShared(); // sees no drain to complete
        pause.resume.countDown();

        Guard exclusive = writer.join(); // the writer's rescan after publishing found the stripes empty
        assertTrue(lock.isWriteLocked());
        exclusive.close();
        assertFalse(lock.isWriteLocked());
    }

    /**
     * A queued writer is granted on the thread that released the lock ahead of it, and its caller
     * cancels the returned stage while that thread is between taking the drain and publishing it.
     * The cancel gives the lock back; a second writer takes it and publishes its own drain; then
     * the first thread publishes the cancelled drain over it. Before the fix the last reader found
     * the cancelled drain, could not complete it, and the second writer was never granted.
     */
    @Test
    void aDrainCancelledBeforeItIsPublishedNeverHidesTheNextWritersDrain() throws Exception {
        assertTrue(lock.tryLockShared()); // the reader both writers wait for
        lock.setBiasPolicy(Boolean.FALSE);
        assertTrue(lock.tryLockSharedUnbiased()); // holds the lock's word, so the first writer queues
        lock.setBiasPolicy(null);
        CompletableFuture<Guard> first = lock.acquire().toCompletableFuture();
        assertFalse(first.isDone());

        Pause pause = new Pause(Point.DRAIN_PUBLISHING);
        lock.hooks = pause::at;
        Forked<Void> granter = unstarted("granter", () -> {
            lock.unlockSharedUnbiased(); // grants the first writer here, which finds the reader
            return null;
        });
        pause.who.set(granter.thread);
        granter.start();
        pause.awaitReached();

        assertTrue(first.cancel(false), "the caller gives up while the drain is not yet published");
        CompletableFuture<Guard> second = lock.acquire().toCompletableFuture();
        assertFalse(second.isDone(), "the second writer waits for the reader");
        pause.resume.countDown();
        granter.join();

        lock.unlockShared(); // the last reader leaves
        Guard exclusive = second.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(lock.isWriteLocked());
        exclusive.close();
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.readers());
    }

    @Test
    void lastReaderLeavingAfterTheDrainIsPublishedGrantsTheWriter() throws Exception {
        assertTrue(lock.tryLockShared());
        Pause pause = new Pause(Point.DRAIN_PUBLISHED);
        lock.hooks = pause::at;
        Forked<Guard> writer =
                unstarted("writer", () -> lock.acquire().toCompletableFuture().join());
        pause.who.set(writer.thread);
        writer.start();
        pause.awaitReached(); // published its drain, has not read the stripes again

        Forked<Void> leaver = fork("leaver", () -> {
            lock.unlockShared(); // completes the writer's stage on this thread
            return null;
        });
        leaver.join();
        pause.resume.countDown();

        Guard exclusive = writer.join(); // its own rescan loses the race to the leaver: granted once
        exclusive.close();
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.readers());
    }

    @Test
    void aWriterStageSettledWhileItsGrantArrivesGivesTheLockBackAtOnce() throws Exception {
        lock.setBiasPolicy(Boolean.TRUE);
        Guard wordReader = lock.acquireShared(CancellationToken.none())
                .toCompletableFuture()
                .join();
        assertTrue(lock.tryLockShared(), "a stripe reader, which the writer will have to drain");
        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture(); // in line behind the word reader
        Pause pause = new Pause(Point.DRAIN_CANCELLING);
        lock.hooks = pause::at;
        Forked<Boolean> caller = unstarted("caller giving up", () -> writer.complete(null));
        pause.who.set(caller.thread);
        caller.start();
        pause.awaitReached(); // the settle's cancel read the wait as still in line for the lock

        wordReader.close(); // grants the writer the lock: it starts draining the stripe reader
        pause.resume.countDown();

        assertTrue(caller.join(), "the caller's value won the stage");
        assertFalse(lock.isWriteLocked(), "an abandoned writer must not keep the lock: " + lock);
        lock.unlockShared();
        assertTrue(lock.tryLock(), "nothing is left held");
        lock.unlock();
    }

    @Test
    void aWriterStageGrantedAfterDrainingRefusesObtrudeAndKeepsOwnership() throws Exception {
        lock.setBiasPolicy(Boolean.TRUE);
        assertTrue(lock.tryLockShared());
        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture(); // drains the reader
        assertFalse(writer.isDone());
        lock.unlockShared(); // grants it

        assertThrows(IllegalStateException.class, () -> writer.obtrudeValue(() -> {}));
        assertThrows(IllegalStateException.class, () -> writer.obtrudeException(new IllegalStateException("no")));

        assertTrue(lock.isWriteLocked());
        writer.join().close();
        assertTrue(lock.tryLock(), "the real guard gave the lock back");
        lock.unlock();
    }

    @Test
    void blockingWriterParksUntilTheLastReaderLeaves() throws Exception {
        assertTrue(lock.tryLockShared());
        Forked<Guard> writer = fork("blocking writer", lock::acquireBlocking);
        awaitParked(writer.thread);
        assertFalse(lock.tryLockShared(), "a waiting writer holds new readers back");
        lock.unlockShared();
        writer.join().close();
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    @Test
    void tokenCancellingADrainingWriterReleasesItAndAdmitsTheReadersBehindIt() throws Exception {
        assertTrue(lock.tryLockShared()); // the biased reader the writer waits for
        CancellationSource source = new CancellationSource();
        CompletableFuture<Guard> writer = lock.acquire(source.token()).toCompletableFuture();
        assertFalse(writer.isDone());

        assertFalse(lock.tryLockShared(), "the draining writer turned the bias off");
        CompletableFuture<Guard> queuedReader =
                lock.acquireShared(CancellationToken.none()).toCompletableFuture();
        assertFalse(queuedReader.isDone(), "a reader queues behind the draining writer");

        assertTrue(source.cancel());
        CancellationException cancelled = assertThrows(CancellationException.class, writer::join);
        assertTrue(writer.isCancelled(), () -> "reads as a cancelled wait: " + cancelled);
        assertFalse(lock.isWriteLocked(), "the cancelled writer released the lock");
        queuedReader.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).close();
        assertTrue(lock.tryLockShared(), "the bias is back on once no writer holds or waits");
        lock.unlockShared();

        lock.unlockShared(); // the first reader leaves: nobody waits for it any more
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    @Test
    void callerCancellingADrainingWriterStageReleasesTheLock() throws Exception {
        assertTrue(lock.tryLockShared());
        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture();
        assertTrue(writer.cancel(false));
        assertFalse(lock.isWriteLocked());
        lock.unlockShared();
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    @Test
    void interruptingABlockingWriterWhileItDrainsReleasesTheLock() throws Exception {
        assertTrue(lock.tryLockShared());
        Forked<Guard> writer = fork("blocking writer", lock::acquireBlocking);
        awaitParked(writer.thread);
        writer.thread.interrupt();
        assertInstanceOf(InterruptedException.class, writer.joinFailure());
        assertFalse(lock.isWriteLocked());
        assertTrue(lock.tryLockShared());
        lock.unlockShared();
        lock.unlockShared();
        assertEquals(0, lock.readers());
    }

    @Test
    void aHoldLeftOnAnotherThreadLetsTheWriterIn() throws Exception {
        Forked<Boolean> taker = fork("taker", lock::tryLockShared);
        assertTrue(taker.join());
        CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture();
        assertFalse(writer.isDone());
        fork("leaver on another thread", () -> {
                    lock.unlockShared();
                    return null;
                })
                .join();
        writer.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).close();
        assertEquals(0, lock.readers());
    }

    /**
     * A virtual thread that parks (unmounts) while it holds, and leaves after it is mounted again,
     * perhaps on another carrier: its hold is keyed by nothing a carrier owns, so the writer
     * waiting for it is granted when it leaves, and nothing pins.
     */
    @Test
    void aVirtualThreadHoldingAcrossAnUnmountLetsTheWriterInWhenItLeaves() throws Throwable {
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        assumeTrue(virtualThreads != null, "virtual threads need JDK 21+");
        try {
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch leave = new CountDownLatch(1);
            Future<Boolean> reader = virtualThreads.submit(() -> {
                boolean held = lock.tryLockShared();
                holding.countDown();
                leave.await(); // parks: the virtual thread unmounts while it holds
                lock.unlockShared();
                return held;
            });
            assertTrue(holding.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            CompletableFuture<Guard> writer = lock.acquire().toCompletableFuture();
            assertFalse(writer.isDone(), "the writer waits for the parked virtual thread's hold");
            leave.countDown();
            assertTrue(reader.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            writer.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).close();
            assertEquals(0, lock.readers());
        } finally {
            virtualThreads.shutdown(); // ExecutorService is AutoCloseable only from JDK 19
        }
    }

    /**
     * A thread that dies holding a shared hold leaks it exactly as a leaked read lock of
     * {@link AsyncSharedMutex} does: writers are kept out (a waiting one can still be cancelled
     * cleanly), readers are not, and since a hold is a count rather than an owner, whoever knows of
     * the leak can give it back from any thread.
     */
    @Test
    void aHoldWhoseThreadDiedKeepsWritersOutUntilGivenBackAndNothingMore() throws Exception {
        Forked<Boolean> dying = fork("dies holding", lock::tryLockShared);
        assertTrue(dying.join());
        dying.thread.join(BOUND.toMillis());
        assertFalse(dying.thread.isAlive());

        assertFalse(lock.tryLock(), "the leaked hold keeps writers out");
        CancellationSource timer = new CancellationSource();
        CompletableFuture<Guard> writer = lock.acquire(timer.token()).toCompletableFuture();
        timer.cancel();
        assertThrows(CancellationException.class, writer::join);
        assertFalse(lock.isWriteLocked(), "a cancelled writer leaves nothing behind");
        assertTrue(lock.tryLockShared(), "readers are unaffected");
        lock.unlockShared();

        lock.unlockShared(); // the leak given back by a thread that knows of it
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    /**
     * A blocking writer whose token ends its wait for the readers throws a cancellation naming the
     * lock, as every blocking wait of the module does; from JDK 23 the drain's {@code get()} throws
     * a new exception, "get", with the named one as its cause.
     */
    @Test
    void aBlockingWriterWhoseTokenEndsItsWaitForReadersIsToldWhichLock() throws Exception {
        ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();
        assertTrue(lock.tryLockShared()); // a reader the writer waits for
        CancellationSource source = new CancellationSource();
        Forked<Void> writer = TestKit.forkRun(
                "writer", () -> lock.acquireBlocking(source.token()).close());
        awaitParked(writer.thread); // in the drain's wait

        source.cancel();

        CancellationException cancelled = assertInstanceOf(CancellationException.class, writer.joinFailure());
        assertTrue(
                cancelled.getMessage().contains("readers of ReaderBiasedSharedMutex"),
                "message: " + cancelled.getMessage() + ", cause: " + cancelled.getCause());
        lock.unlockShared();
        assertTrue(lock.tryLock(), "the cancelled writer owns nothing");
        lock.unlock();
    }
}
