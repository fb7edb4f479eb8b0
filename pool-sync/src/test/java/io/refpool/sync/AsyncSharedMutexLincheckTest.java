package io.refpool.sync;

import io.refpool.sync.internal.QueueHooks;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck model checking of {@link AsyncSharedMutex}: every interleaving Lincheck explores of
 * shared and exclusive tries, async acquires, releases by the owner and cancellations must give
 * results some sequential run of the same operations gives. Run sequentially, every grant happens
 * inside the operation that caused it, so the sequential runs are the policy itself (writer
 * preference, FIFO, batch admission, re-admission on cancel, the ceiling); a reader that queued
 * where a sequential run acquires at once (a lost locked CAS) is a non-linearizable result.
 *
 * <p>Operations never block: async acquires return at once, and each thread releases or cancels
 * only what it holds or waits for. The ceiling is 2 so that it is reached. {@link #noLostWakeup()}
 * checks after each run that nobody waits while the lock could serve them.
 */
public class AsyncSharedMutexLincheckTest {
    private static final int THREADS = 3;
    private static final int CEILING = 2;

    private final AsyncSharedMutex lock = new AsyncSharedMutex(CEILING);

    /**
     * Whether the current thread's acquire linked a waiter. An async acquire's result is taken from
     * here, not from its future: a release on another thread may complete the future between the
     * call and a look at it, and the result must be what happened at the call.
     */
    private final ThreadLocal<boolean[]> publishedByThisThread = ThreadLocal.withInitial(() -> new boolean[1]);

    /** What one thread holds or waits for; touched only by that thread. */
    private static final class Slot {
        boolean rawShared;
        boolean rawExclusive;
        boolean exclusive;
        CompletionStage<Guard> acquire;

        boolean busy() {
            return rawShared || rawExclusive || acquire != null;
        }
    }

    private final Slot[] slots = new Slot[THREADS + 1];

    public AsyncSharedMutexLincheckTest() {
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot();
        }
        SyncTesting.queueOf(lock).setHooks(point -> {
            if (point == QueueHooks.Point.BEFORE_PUBLICATION) {
                publishedByThisThread.get()[0] = true;
            }
        });
    }

    private Slot slot(int thread) {
        return slots[Math.min(thread, THREADS)];
    }

    @Operation
    public String tryLockShared(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.busy()) {
            return "busy";
        }
        s.rawShared = lock.tryLockShared();
        return s.rawShared ? "locked" : "refused";
    }

    @Operation
    public String tryLock(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.busy()) {
            return "busy";
        }
        s.rawExclusive = lock.tryLock();
        return s.rawExclusive ? "locked" : "refused";
    }

    @Operation
    public String acquireShared(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.busy()) {
            return "busy";
        }
        boolean[] queued = publishedByThisThread.get();
        queued[0] = false;
        CompletionStage<Guard> acquired = lock.acquireShared();
        if (acquired.toCompletableFuture().isCompletedExceptionally()) { // refused at the ceiling, through the stage
            return "ceiling";
        }
        s.acquire = acquired;
        s.exclusive = false;
        return queued[0] ? "queued" : "granted";
    }

    @Operation
    public String acquire(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.busy()) {
            return "busy";
        }
        boolean[] queued = publishedByThisThread.get();
        queued[0] = false;
        s.acquire = lock.acquire();
        s.exclusive = true;
        return queued[0] ? "queued" : "granted";
    }

    /** Releases what this thread holds; an acquire still waiting is left alone. */
    @Operation
    public String release(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.rawShared) {
            s.rawShared = false;
            lock.unlockShared();
            return "released";
        }
        if (s.rawExclusive) {
            s.rawExclusive = false;
            lock.unlock();
            return "released";
        }
        if (s.acquire == null) {
            return "nothing";
        }
        CompletableFuture<Guard> f = s.acquire.toCompletableFuture();
        if (!f.isDone()) {
            return "waiting";
        }
        s.acquire = null;
        f.join().close();
        return "released";
    }

    /** Cancels this thread's waiting acquire through its future. */
    @Operation
    public String cancel(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.acquire == null) {
            return "nothing";
        }
        CompletableFuture<Guard> f = s.acquire.toCompletableFuture();
        if (f.cancel(true)) {
            s.acquire = null;
            return "cancelled";
        }
        return "granted first";
    }

    @Validate
    public void noLostWakeup() {
        int readers = 0;
        int writers = 0;
        int waiting = 0;
        int waitingReaders = 0;
        int waitingWriters = 0;
        for (Slot s : slots) {
            if (s.rawShared) {
                readers++;
            }
            if (s.rawExclusive) {
                writers++;
            }
            if (s.acquire != null) {
                CompletableFuture<Guard> f = s.acquire.toCompletableFuture();
                if (!f.isDone()) {
                    waiting++;
                    if (s.exclusive) {
                        waitingWriters++;
                    } else {
                        waitingReaders++;
                    }
                } else if (s.exclusive) {
                    writers++;
                } else {
                    readers++;
                }
            }
        }
        check(readers == lock.readers(), "readers " + readers + " vs " + lock);
        check((writers == 1) == lock.isWriteLocked() && writers <= 1, "writers " + writers + " vs " + lock);
        check(readers == 0 || writers == 0, "a writer with readers: " + lock);
        check(waiting == lock.queueLength(), "waiting " + waiting + " vs " + lock);
        check(waiting == 0 || readers > 0 || writers > 0, "acquires wait on a free lock: " + lock);
        check(
                waitingReaders == 0 || writers > 0 || waitingWriters > 0 || readers == CEILING,
                "readers wait with no writer holding or waiting, below the ceiling: " + lock);
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }

    @Test
    void randomScenariosGiveOnlyLinearizableResults() {
        new ModelCheckingOptions()
                .threads(THREADS)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .iterations(4)
                .invocationsPerIteration(250)
                .check(getClass());
    }

    /** The races the hand-written tests force, explored here over many more interleavings. */
    @Test
    void lostWakeupAndReadmissionRacesGiveOnlyLinearizableResults() throws NoSuchMethodException {
        new ModelCheckingOptions()
                .iterations(0)
                .invocationsPerIteration(1_000)
                // a reader's locked recheck after the writer left, against another reader's CAS
                .addCustomScenario(scenario(
                        List.of("tryLock"), List.of("release"), List.of("acquireShared"), List.of("tryLockShared")))
                // a waiting writer cancelled while the reader it waits for leaves and a reader arrives
                .addCustomScenario(scenario(
                        List.of("tryLockShared"),
                        List.of("release"),
                        List.of("acquire", "cancel"),
                        List.of("acquireShared", "release")))
                // a reader of the next batch cancelled while the writer releases and a writer arrives
                .addCustomScenario(scenario(
                        List.of("tryLock"),
                        List.of("release"),
                        List.of("acquireShared", "cancel"),
                        List.of("acquire", "release")))
                .check(getClass());
    }

    /**
     * A scenario in which thread {@code i} runs {@code threads[i]}; the initial part runs as thread
     * 0. Each operation gets the index of its thread.
     */
    @SafeVarargs
    private static ExecutionScenario scenario(List<String> initial, List<String>... threads)
            throws NoSuchMethodException {
        List<Actor> init = new ArrayList<>();
        for (String op : initial) {
            init.add(actor(op, 0));
        }
        List<List<Actor>> parallel = new ArrayList<>();
        for (int t = 0; t < threads.length; t++) {
            List<Actor> actors = new ArrayList<>();
            for (String op : threads[t]) {
                actors.add(actor(op, t));
            }
            parallel.add(actors);
        }
        Actor validation = new Actor(AsyncSharedMutexLincheckTest.class.getMethod("noLostWakeup"), List.of());
        return new ExecutionScenario(init, parallel, List.of(), validation);
    }

    private static Actor actor(String operation, int thread) throws NoSuchMethodException {
        return new Actor(AsyncSharedMutexLincheckTest.class.getMethod(operation, int.class), List.of(thread));
    }
}
