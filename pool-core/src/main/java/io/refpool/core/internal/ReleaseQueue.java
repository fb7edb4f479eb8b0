package io.refpool.core.internal;

import io.refpool.core.internal.ReleaseQueueHooks.Point;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The deferred-release queue: releases that happened off-attachment, in a list guarded by a lock,
 * plus a {@code dirty} flag that tells an attaching thread whether there is anything to apply. The
 * one owner of the dirty-flag protocol; {@link DeferredReleases} decides when a drainer runs.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   dirty      to       by
 *   false      true     enqueue, with a release store, after its add is visible under the lock
 *   true       false    the one attaching thread whose CAS wins; it then locks and swaps the batch
 *
 *   read                    ordering    relied on by
 *   dirty                   acquire     every attach: the whole check when nothing is pending
 *   volatileSize()          volatile    the drainer's "anything to do" (see DrainScheduler)
 * </pre>
 *
 * <p><b>Enqueue</b> (any thread): lock, add, unlock, <em>then</em> raise the flag with a release
 * store. Raising it first would let a drainer clear the flag and swap out the list before the add,
 * stranding the item with the flag down.
 *
 * <p><b>The check</b> ({@link #takeIfDirty()}) is one acquire load when nothing is pending: no CAS,
 * no swap, no lock, no write to shared memory, so attaching threads do not contend on this queue and
 * attach scales with cores. When the flag is set, a CAS from true to false lets one attacher through
 * to the lock; the others go on without waiting.
 *
 * <p><b>Why nothing is lost.</b> If an enqueue's raise happens before a drainer's CAS clears the
 * flag, its add happened before that CAS and so before the drainer's swap, which takes it. If the
 * raise happens after the CAS, the flag stays up for the next attach. Either way the release is
 * applied by the first attach that starts after its close returned. The swap moves each item out of
 * the list exactly once: never a loss, never a double apply. The batch is applied outside the lock,
 * so user code (disposers) never runs under it.
 *
 * <p><b>Batches out, and flush.</b> A batch swapped out is "out" until its taker calls {@link
 * #completed}. Each swap numbers its batch, under the lock, one more than the last. A flush ({@link
 * #takeForFlush}) takes what is pending, so every release enqueued before it is either in its own
 * batch or in one numbered below it; {@link #awaitOutUpTo} then waits until no batch numbered up to
 * its own is out. Flushes need no order among themselves: each waits for its own number, and one
 * that stopped waiting leaves its batches out for a later flush, whose number is higher:
 *
 * <pre>
 *   batch       to          by
 *   pending     out (n)     a swap (takeIfDirty, takeAll, takeForFlush), numbered n, under the lock
 *   out (n)     completed   completed(batch), under the lock; it wakes the flushers waiting
 * </pre>
 *
 * <p><b>Layout.</b> The flag sits alone on its cache lines: 128 bytes of padding on each side (two
 * lines, for adjacent-line prefetch) keep it apart from the lock word, the list and its size
 * (written on every enqueue) and from neighbouring objects. Byte fields are used for padding because
 * the JVM packs narrower subclass fields into gaps of a superclass's layout; bytes leave no gaps.
 *
 * @param <T> the kind of release
 */
public final class ReleaseQueue<T> extends ReleaseQueuePadAfter {
    private static final VarHandle DIRTY =
            FieldHandles.find(MethodHandles.lookup(), ReleaseQueueFlag.class, "dirty", boolean.class);

    /** Guards {@code pending}; never held while user code runs. */
    private final ReentrantLock queueLock = new ReentrantLock();

    private Batch<T> pending = new Batch<>();

    /** The number of the last batch swapped out; under the lock. */
    private long swapped;

    /** The batches out, in the order of their numbers; under the lock. */
    private final ArrayDeque<Batch<T>> out = new ArrayDeque<>();

    /** Signalled when a batch completes while a flusher waits; with the lock. */
    private final Condition batchCompleted = queueLock.newCondition();

    /** Flushers waiting in {@link #awaitOutUpTo}; under the lock. */
    private int flushersWaiting;

    /** Written under the lock on every enqueue and swap; read by the drainer (see the table). */
    private volatile int size;

    private volatile ReleaseQueueHooks hooks;

    /** Creates an empty queue. */
    public ReleaseQueue() {}

    /**
     * Adds a pending release: lock, add, unlock, then raise the flag (release store).
     *
     * @param release what to apply when attached
     * @return the number of pending releases right after the add
     */
    public int enqueue(T release) {
        int after;
        lockQueue();
        try {
            pending.add(release);
            after = pending.size();
            size = after;
        } finally {
            queueLock.unlock();
        }
        hook(Point.BETWEEN_ADD_AND_FLAG);
        DIRTY.setRelease(this, true);
        return after;
    }

    /**
     * The attach-side check: one acquire load when nothing is pending.
     *
     * @return the batch to apply, owned by the caller from now on, or {@code null}
     */
    public Batch<T> takeIfDirty() {
        if (!(boolean) DIRTY.getAcquire(this)) {
            return null;
        }
        if (!DIRTY.compareAndSet(this, true, false)) {
            return null; // another attacher is draining this batch
        }
        return swapBatch(false);
    }

    /**
     * Takes every pending release whatever the flag says (the drainer's and close's way in); the
     * flag is left as it is, so a release whose flag store is still in flight is not stranded.
     *
     * @return the batch, or {@code null} if the list was empty
     */
    public Batch<T> takeAll() {
        return swapBatch(false);
    }

    /**
     * Starts a flush: takes what is pending, as a batch numbered even if it is empty. The caller
     * applies the batch, completes it, then waits with {@link #awaitOutUpTo} for the batches
     * numbered up to it.
     *
     * @return the batch, possibly empty, never {@code null}
     */
    public Batch<T> takeForFlush() {
        return swapBatch(true);
    }

    private Batch<T> swapBatch(boolean flush) {
        lockQueue();
        try {
            Batch<T> batch = pending;
            if (batch.isEmpty() && !flush) {
                return null;
            }
            pending = new Batch<>();
            size = 0;
            batch.number = ++swapped;
            out.addLast(batch);
            return batch;
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * Marks a batch taken from this queue as applied; each batch once.
     *
     * @param batch the batch
     */
    public void completed(Batch<T> batch) {
        queueLock.lock(); // not the hooked lockQueue: the seam's points are the enqueue's and the swap's
        try {
            for (Iterator<Batch<T>> it = out.iterator(); it.hasNext(); ) {
                if (it.next() == batch) { // by identity: batches are lists, equal when their releases are
                    it.remove();
                    break;
                }
            }
            if (flushersWaiting > 0) {
                batchCompleted.signalAll();
            }
        } finally {
            queueLock.unlock();
        }
    }

    /** {@return whether a batch numbered up to {@code number} is out} */
    public boolean hasOutUpTo(long number) {
        queueLock.lock();
        try {
            return outUpTo(number);
        } finally {
            queueLock.unlock();
        }
    }

    /**
     * Waits until no batch numbered up to {@code number} is out. Any number of flushers may wait.
     *
     * @param number the number of a flush's own batch
     * @throws InterruptedException if interrupted while waiting; batches stay out and are applied
     */
    public void awaitOutUpTo(long number) throws InterruptedException {
        queueLock.lock();
        try {
            flushersWaiting++;
            try {
                while (outUpTo(number)) {
                    batchCompleted.await();
                }
            } finally {
                flushersWaiting--;
            }
        } finally {
            queueLock.unlock();
        }
    }

    private boolean outUpTo(long number) {
        Batch<T> oldest = out.peekFirst();
        return oldest != null && oldest.number <= number;
    }

    /**
     * A batch swapped out of the queue: the releases, in enqueue order, and its number.
     *
     * @param <T> the kind of release
     */
    public static final class Batch<T> extends ArrayList<T> {
        private static final long serialVersionUID = 1L;

        /** One more than the batch swapped out before it; set under the lock at the swap. */
        long number;

        /** {@return the number of this batch}: every batch swapped out before it has a lower one */
        public long number() {
            return number;
        }
    }

    /** {@return the number of pending releases, a volatile read (ordering: see the table)} */
    public int volatileSize() {
        return size;
    }

    /** {@return whether the flag is raised, read with acquire ordering} */
    public boolean isDirty() {
        return (boolean) DIRTY.getAcquire(this);
    }

    /**
     * Installs the test seam; {@code null} turns it off.
     *
     * @throws IllegalStateException if the JVM runs without test seams ({@link TestSeams})
     */
    public void setHooks(ReleaseQueueHooks hooks) {
        TestSeams.checkInstallable(hooks);
        this.hooks = hooks;
    }

    private void lockQueue() {
        hook(Point.QUEUE_LOCK);
        queueLock.lock();
    }

    private void hook(Point point) {
        if (TestSeams.ON) { // folded away when the seams are off
            ReleaseQueueHooks h = hooks;
            if (h != null) {
                h.at(point);
            }
        }
    }
}

/** Padding between the object header and the flag. */
abstract class ReleaseQueuePadBefore {
    byte p000, p001, p002, p003, p004, p005, p006, p007;
    byte p008, p009, p010, p011, p012, p013, p014, p015;
    byte p016, p017, p018, p019, p020, p021, p022, p023;
    byte p024, p025, p026, p027, p028, p029, p030, p031;
    byte p032, p033, p034, p035, p036, p037, p038, p039;
    byte p040, p041, p042, p043, p044, p045, p046, p047;
    byte p048, p049, p050, p051, p052, p053, p054, p055;
    byte p056, p057, p058, p059, p060, p061, p062, p063;
    byte p064, p065, p066, p067, p068, p069, p070, p071;
    byte p072, p073, p074, p075, p076, p077, p078, p079;
    byte p080, p081, p082, p083, p084, p085, p086, p087;
    byte p088, p089, p090, p091, p092, p093, p094, p095;
    byte p096, p097, p098, p099, p100, p101, p102, p103;
    byte p104, p105, p106, p107, p108, p109, p110, p111;
    byte p112, p113, p114, p115, p116, p117, p118, p119;
    byte p120, p121, p122, p123, p124, p125, p126, p127;
}

/** The flag, alone between two paddings. */
abstract class ReleaseQueueFlag extends ReleaseQueuePadBefore {
    @SuppressWarnings("unused") // accessed through ReleaseQueue.DIRTY
    volatile boolean dirty;
}

/** Padding between the flag and the queue's own fields. */
abstract class ReleaseQueuePadAfter extends ReleaseQueueFlag {
    byte q000, q001, q002, q003, q004, q005, q006, q007;
    byte q008, q009, q010, q011, q012, q013, q014, q015;
    byte q016, q017, q018, q019, q020, q021, q022, q023;
    byte q024, q025, q026, q027, q028, q029, q030, q031;
    byte q032, q033, q034, q035, q036, q037, q038, q039;
    byte q040, q041, q042, q043, q044, q045, q046, q047;
    byte q048, q049, q050, q051, q052, q053, q054, q055;
    byte q056, q057, q058, q059, q060, q061, q062, q063;
    byte q064, q065, q066, q067, q068, q069, q070, q071;
    byte q072, q073, q074, q075, q076, q077, q078, q079;
    byte q080, q081, q082, q083, q084, q085, q086, q087;
    byte q088, q089, q090, q091, q092, q093, q094, q095;
    byte q096, q097, q098, q099, q100, q101, q102, q103;
    byte q104, q105, q106, q107, q108, q109, q110, q111;
    byte q112, q113, q114, q115, q116, q117, q118, q119;
    byte q120, q121, q122, q123, q124, q125, q126, q127;
}
