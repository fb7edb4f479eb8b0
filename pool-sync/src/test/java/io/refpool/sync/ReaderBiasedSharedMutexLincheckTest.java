package io.refpool.sync;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck model checking of {@link ReaderBiasedSharedMutex}: biased shared tries, shared holds
 * given back on any thread, exclusive tries, async exclusive acquires, their releases and
 * cancellations, in every interleaving Lincheck explores.
 *
 * <p>The operations return nothing, so the sequential specification is the invariant itself,
 * checked inside every operation and after every run
 * ({@link #noHolderWithAWriterAndNoLostWakeup()}): the holders are many readers or one writer,
 * the lock's counts equal the holds the test knows of, and no writer waits for readers that are
 * gone (a lost wake-up of the drain). Results are left out on purpose: this lock is not
 * linearizable against {@link AsyncSharedMutex}'s sequential policy. A reader in the middle of its
 * handshake is counted before it knows whether it holds, so a writer meeting it waits, or its try
 * fails, where a sequential run would let it in, and the reader, seeing that writer, is refused;
 * the two tries can both fail with nothing held. That is the price of a reader writing only its
 * own stripe, and {@code tryLock()} documents it.
 */
public class ReaderBiasedSharedMutexLincheckTest {
    private static final int THREADS = 3;

    private final ReaderBiasedSharedMutex lock = new ReaderBiasedSharedMutex();

    /** Shared holds taken by {@code tryLockShared}, given back by any thread: holds are counts. */
    private final AtomicInteger sharedHolds = new AtomicInteger();

    /** Writers that hold (granted, not yet released). */
    private final AtomicInteger writersInside = new AtomicInteger();

    /** What one thread's exclusive side holds or waits for; touched only by that thread. */
    private static final class Slot {
        boolean rawExclusive;
        CompletionStage<Guard> acquire;
        boolean granted;

        boolean busy() {
            return rawExclusive || acquire != null;
        }
    }

    private final Slot[] slots = new Slot[THREADS + 1];

    /** Holds on the underlying word, taken while the bias was off ({@code tryLockSharedUnbiased}). */
    private final AtomicInteger wordHolds = new AtomicInteger();

    /** A clock that moves one tick per read: deterministic, so inhibit windows open and close. */
    private final AtomicLong ticks = new AtomicLong();

    public ReaderBiasedSharedMutexLincheckTest() {
        lock.clock = ticks::incrementAndGet;
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot();
        }
    }

    private Slot slot(int thread) {
        return slots[Math.min(thread, THREADS)];
    }

    @Operation
    public void tryLockShared() {
        if (lock.tryLockShared()) {
            check(writersInside.get() == 0, "a reader entered while a writer holds: " + lock);
            sharedHolds.incrementAndGet();
            return;
        }
        if (lock.tryLockSharedUnbiased()) { // the bias is off after a revocation
            check(writersInside.get() == 0, "a word reader entered while a writer holds: " + lock);
            wordHolds.incrementAndGet();
        }
    }

    /** Gives back one shared hold, whichever thread took it. */
    @Operation
    public void unlockShared() {
        int holds = sharedHolds.get();
        if (holds > 0 && sharedHolds.compareAndSet(holds, holds - 1)) {
            lock.unlockShared();
            return;
        }
        int words = wordHolds.get();
        if (words > 0 && wordHolds.compareAndSet(words, words - 1)) {
            lock.unlockSharedUnbiased();
        }
    }

    @Operation
    public void tryLock(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.busy()) {
            return;
        }
        if (lock.tryLock()) {
            enterAsWriter();
            s.rawExclusive = true;
        }
    }

    @Operation
    public void acquire(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.busy()) {
            return;
        }
        s.granted = false;
        CompletionStage<Guard> stage = lock.acquire();
        s.acquire = stage;
        stage.thenAccept(guard -> {
            enterAsWriter(); // on whichever thread granted it: the last reader to leave, perhaps
            s.granted = true;
        });
    }

    /** Releases this thread's exclusive hold if granted; a wait still open is left alone. */
    @Operation
    public void release(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.rawExclusive) {
            s.rawExclusive = false;
            writersInside.decrementAndGet();
            lock.unlock();
            return;
        }
        if (s.acquire == null || !s.granted) {
            return;
        }
        Guard guard = s.acquire.toCompletableFuture().join();
        s.acquire = null;
        writersInside.decrementAndGet();
        guard.close();
    }

    /** Cancels this thread's exclusive acquire through its stage, whether it waits or was granted. */
    @Operation
    public void cancel(@Param(gen = ThreadIdGen.class) int thread) {
        Slot s = slot(thread);
        if (s.acquire == null || s.granted) {
            return;
        }
        if (s.acquire.toCompletableFuture().cancel(false)) {
            s.acquire = null;
        }
    }

    private void enterAsWriter() {
        check(writersInside.getAndIncrement() == 0, "two writers: " + lock);
        check(sharedHolds.get() + wordHolds.get() == 0, "a writer granted while readers hold: " + lock);
    }

    @Validate
    public void noHolderWithAWriterAndNoLostWakeup() {
        int readers = sharedHolds.get() + wordHolds.get();
        int writers = writersInside.get();
        check(lock.readers() == readers, "readers " + readers + " vs " + lock);
        check(writers <= 1 && (writers == 0 || readers == 0), "holders: " + lock);
        for (Slot s : slots) {
            if (s.acquire == null) {
                continue;
            }
            CompletableFuture<Guard> f = s.acquire.toCompletableFuture();
            if (!f.isDone() && lock.isWriteLocked() && writers == 0 && readers == 0) {
                throw new IllegalStateException("a writer waits for readers that are gone: " + lock);
            }
            if (f.isDone() && !f.isCompletedExceptionally() && !s.granted) {
                throw new IllegalStateException("a stage completed without its writer entering: " + lock);
            }
        }
        boolean waiting = false;
        for (Slot s : slots) {
            waiting |= s.acquire != null && !s.granted;
        }
        check(
                waiting || writers > 0 || !lock.isWriteLocked(),
                "write-locked with no writer holding or waiting: " + lock);
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }

    @Test
    void randomScenariosKeepReadersAndWritersApart() {
        new ModelCheckingOptions()
                .threads(THREADS)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(2)
                .iterations(8)
                .invocationsPerIteration(300)
                .check(getClass());
    }

    /** The handshake's races, explored over many interleavings. */
    @Test
    void handshakeRacesKeepReadersAndWritersApartAndLoseNoWakeup() throws NoSuchMethodException {
        new ModelCheckingOptions()
                .iterations(0)
                .invocationsPerIteration(1_000)
                // a reader arriving while a writer revokes the bias, against the last reader leaving
                .addCustomScenario(scenario(
                        List.of(op("tryLockShared")),
                        List.of(op("acquire", 1), op("release", 1)),
                        List.of(op("tryLockShared"), op("unlockShared")),
                        List.of(op("unlockShared"))))
                // a draining writer cancelled while readers leave and arrive
                .addCustomScenario(scenario(
                        List.of(op("tryLockShared")),
                        List.of(op("acquire", 1), op("cancel", 1)),
                        List.of(op("unlockShared"), op("tryLockShared")),
                        List.of(op("tryLock", 3), op("release", 3))))
                // an exclusive try against a reader's handshake and a queued writer
                .addCustomScenario(scenario(
                        List.of(),
                        List.of(op("tryLock", 1), op("release", 1)),
                        List.of(op("tryLockShared"), op("unlockShared")),
                        List.of(op("acquire", 3), op("release", 3))))
                .check(getClass());
    }

    private record Op(String name, Integer thread) {}

    private static Op op(String name) {
        return new Op(name, null);
    }

    private static Op op(String name, int thread) {
        return new Op(name, thread);
    }

    @SafeVarargs
    private static ExecutionScenario scenario(List<Op> initial, List<Op>... threads) throws NoSuchMethodException {
        List<Actor> init = new ArrayList<>();
        for (Op op : initial) {
            init.add(actor(op));
        }
        List<List<Actor>> parallel = new ArrayList<>();
        for (List<Op> ops : threads) {
            List<Actor> actors = new ArrayList<>();
            for (Op op : ops) {
                actors.add(actor(op));
            }
            parallel.add(actors);
        }
        Actor validation = new Actor(
                ReaderBiasedSharedMutexLincheckTest.class.getMethod("noHolderWithAWriterAndNoLostWakeup"), List.of());
        return new ExecutionScenario(init, parallel, List.of(), validation);
    }

    private static Actor actor(Op op) throws NoSuchMethodException {
        if (op.thread() == null) {
            return new Actor(ReaderBiasedSharedMutexLincheckTest.class.getMethod(op.name()), List.of());
        }
        return new Actor(
                ReaderBiasedSharedMutexLincheckTest.class.getMethod(op.name(), int.class), List.of(op.thread()));
    }
}
