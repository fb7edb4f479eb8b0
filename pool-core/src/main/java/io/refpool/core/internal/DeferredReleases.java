package io.refpool.core.internal;

import io.refpool.core.EvictionCause;
import io.refpool.core.PoolError;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Deferred releases: what a close off-attachment leaves for the next attach, held in a
 * {@link ReleaseQueue} (the list and its dirty flag), applied by attaches, and by a drainer when
 * nobody attaches. The one owner of enqueueing, applying and drainer scheduling.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   release            applied as
 *   Entry              a plain decrement of whatever the count is then (a key acquired again in
 *                      between stays live); at 0, {@link EndOfLife#reachedZero} idles or disposes it
 *   Eviction           a disposal, if the object is still idle from the spell that was evicted
 *                      ({@link EndOfLife#applyEviction})
 *
 *   flag       to       by
 *   urgent     true     an enqueue past the threshold, or after close (not an eviction's)
 *   delayed    true     any other enqueue; the JDK's delay thread hands the drain on after the delay
 *   either     false    the drain it scheduled, first thing when it runs; or, if the executor
 *                      took that drain and has not started it a drain delay later (at most a
 *                      second), the watch that gives it up (then the watch hands a new drain over)
 *
 *   a drain handed to the executor: one CAS on its own "started" decides between its run and
 *   its watch, so a dropped drain (a discard policy) never keeps its flag up for good, and a late
 *   one that lost does nothing
 * </pre>
 *
 * <p><b>No lost drain.</b> A drain clears its flag and then reads the queue's volatile size; an
 * enqueue writes the size and then reads the flag. All four accesses are volatile, so at least one
 * side sees the other: the enqueue schedules a new drain, or this drain sees the item. The drain
 * takes the whole list whatever the dirty flag says, because an enqueue raises that flag with a
 * release store that may not be visible yet; a flag left up only costs the next attach an empty swap.
 *
 * <p><b>No borrowed thread blocks.</b> A drain never parks on the gate: when the gate is busy it
 * joins the line without a thread and runs when granted ({@link Attacher#runInternal}), so drainer
 * threads shared with other pools are never held by this one. The JDK's delay thread only hands a
 * delayed drain to the library's own drainer threads ({@link DrainerThreads}); it never runs it,
 * nor calls the pool's executor, whose caller-runs policy would run it there. An executor that
 * rejects or fails a drain (even with an {@code Error}) gets it back on the scheduling thread, which
 * the drain does not block; nothing is thrown at the enqueuing caller (a handle's {@code close()}).
 */
final class DeferredReleases<K, V> {
    private final PoolState pool;
    private final PoolCounters counters;
    private final SlotTable<K, V> slots;
    private final EndOfLife<K, V> endOfLife;
    private final Disposals<K, V> disposals;
    private final Attacher<K, V> attacher;
    private final ReleaseQueue<Release> queue;
    private final Executor executor;
    private final long drainDelayNanos;
    /**
     * How long a drain the executor took may go unstarted before its watch gives it up: the drain
     * delay, at most a second, so that the watches pending at once stay few (one per drain handed
     * over in that time) even with a long drain delay.
     */
    private final long watchDelayNanos;

    private final int drainThreshold;
    private final AtomicBoolean delayedScheduled = new AtomicBoolean();
    private final AtomicBoolean urgentScheduled = new AtomicBoolean();
    /** Serializes flushes: each waits for the epoch it ended, and only one epoch is ended at a time. */
    private final ReentrantLock flushes = new ReentrantLock();

    DeferredReleases(
            ReleaseQueue<Release> queue,
            PoolState pool,
            PoolCounters counters,
            SlotTable<K, V> slots,
            EndOfLife<K, V> endOfLife,
            Disposals<K, V> disposals,
            Attacher<K, V> attacher,
            Executor executor,
            long drainDelayNanos,
            int drainThreshold) {
        this.queue = queue;
        this.pool = pool;
        this.counters = counters;
        this.slots = slots;
        this.endOfLife = endOfLife;
        this.disposals = disposals;
        this.attacher = attacher;
        this.executor = executor;
        this.drainDelayNanos = drainDelayNanos;
        this.watchDelayNanos = Math.min(drainDelayNanos, TimeUnit.SECONDS.toNanos(1));
        this.drainThreshold = drainThreshold;
    }

    ReleaseQueue<Release> queue() {
        return queue;
    }

    /**
     * Defers a release to the next attach, or to the drainer. An eviction only ever schedules the
     * delayed drain: it is enqueued from inside Caffeine's eviction, where running a drain would
     * apply releases inside the cache's update.
     */
    void enqueue(Release release) {
        int pending = queue.enqueue(release);
        boolean eviction = release instanceof Eviction;
        if ((pending >= drainThreshold || pool.isClosed()) && !eviction) {
            if (!urgentScheduled.get() && urgentScheduled.compareAndSet(false, true)) {
                submit(urgentScheduled);
            }
        } else if (!delayedScheduled.get() && delayedScheduled.compareAndSet(false, true)) {
            armTimer();
        }
    }

    private void armTimer() {
        if (!later(drainDelayNanos, () -> submit(delayedScheduled))) {
            delayedScheduled.set(false); // the next enqueue or attach takes over
        }
    }

    /** Runs {@code task} on a drainer thread once {@code delayNanos} have passed. @return whether the timer was armed */
    private boolean later(long delayNanos, Runnable task) {
        try {
            CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS, this::handOffFromTimer)
                    .execute(task);
            return true;
        } catch (Throwable timerFailed) {
            pool.report(PoolError.Kind.DRAINER_FAILED, null, "the drain timer could not be armed", timerFailed);
            return false;
        }
    }

    /** Runs on the JDK's delay thread: a hand-off that cannot block, re-armed if it fails. */
    private void handOffFromTimer(Runnable task) {
        try {
            DrainerThreads.shared().execute(task);
        } catch (Throwable noThread) {
            pool.report(
                    PoolError.Kind.DRAINER_FAILED,
                    null,
                    "no drainer thread could take a delayed drain; retrying after the drain delay",
                    noThread);
            later(drainDelayNanos, task);
        }
    }

    private void submit(AtomicBoolean scheduled) {
        AtomicBoolean started = new AtomicBoolean();
        Runnable drain = () -> {
            if (started.compareAndSet(false, true)) { // else its watch gave it up: a newer drain runs
                drain(scheduled);
            }
        };
        try {
            executor.execute(drain);
            later(watchDelayNanos, () -> giveUpIfNotStarted(scheduled, started));
            return;
        } catch (RejectedExecutionException rejected) {
            pool.report(
                    PoolError.Kind.DRAINER_REJECTED,
                    null,
                    "the pool's executor rejected a drain; it runs on the thread that scheduled it",
                    rejected);
        } catch (Throwable failed) {
            pool.report(
                    PoolError.Kind.DRAINER_FAILED,
                    null,
                    "the pool's executor failed to take a drain; it runs on the thread that scheduled it",
                    failed);
        }
        drain.run();
    }

    /**
     * The watch of a drain the executor took: if it has not started after the watch delay (the
     * executor dropped it, or is that busy), it is given up and, if releases are pending, a new
     * one handed over.
     */
    private void giveUpIfNotStarted(AtomicBoolean scheduled, AtomicBoolean started) {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        scheduled.set(false);
        if (queue.volatileSize() > 0 && scheduled.compareAndSet(false, true)) {
            submit(scheduled);
        }
    }

    private void drain(AtomicBoolean scheduled) {
        scheduled.set(false); // an enqueue from now on schedules again
        if (queue.volatileSize() == 0) {
            return;
        }
        Thread thread = Thread.currentThread();
        String threadName = DrainerThreads.owns(thread) ? thread.getName() : null;
        if (threadName != null) {
            thread.setName(threadName + " (pool '" + pool.name() + "')"); // a thread dump names the pool
        }
        try {
            attacher.runInternal(this::applyAll);
        } catch (Throwable e) {
            pool.report(PoolError.Kind.DRAINER_FAILED, null, "the drainer failed to apply pending releases", e);
        } finally {
            if (threadName != null) {
                thread.setName(threadName);
            }
        }
    }

    /** The idle tier evicted {@code value}: its disposal is queued. @return whether it was pooled */
    boolean evicted(V value, EvictionCause cause) {
        Entry<K, V> entry = slots.byIdentity(value);
        if (entry == null) {
            return false;
        }
        enqueue(new Eviction<>(entry, cause, entry.recordSpell()));
        return true;
    }

    /** The attach-side check: one acquire load when nothing is pending. */
    void applyIfDirty(AttachState s) {
        ReleaseQueue.Batch<Release> batch = queue.takeIfDirty();
        if (batch != null) {
            apply(batch, s);
        }
    }

    /** Applies every pending release, whatever the flag says; the thread is attached. */
    void applyAll(AttachState s) {
        ReleaseQueue.Batch<Release> batch = queue.takeAll();
        if (batch != null) {
            apply(batch, s);
        }
    }

    /**
     * {@code pool.flush()} on an attached thread: applies what is pending and waits until every batch
     * other threads took before it is applied too. Called from a disposal on this thread (a disposer
     * that flushes), it applies what is pending and neither waits nor takes the flush lock: the
     * batch that runs the disposer is one of those it would wait for, and another thread's flush
     * may hold that lock while it waits for this very batch.
     *
     * @throws InterruptedException if interrupted while waiting for another thread's batch
     */
    void flush(AttachState s) throws InterruptedException {
        if (s.disposing) {
            // inside a disposal: the batch running it may be one another flusher waits for while
            // holding the flush lock, so taking that lock here would wait for that flusher for ever
            applyAll(s);
            return;
        }
        flushes.lock();
        try {
            ReleaseQueue.Batch<Release> batch = queue.takeForFlush();
            apply(batch, s);
            queue.awaitEpoch(batch.epoch() ^ 1);
        } finally {
            flushes.unlock();
        }
    }

    @SuppressWarnings("unchecked")
    private void apply(ReleaseQueue.Batch<Release> batch, AttachState s) {
        try {
            applyEach(batch, s);
        } finally {
            queue.completed(batch);
        }
    }

    @SuppressWarnings("unchecked")
    private void applyEach(ArrayList<Release> batch, AttachState s) {
        PoolEvents.Drain event = new PoolEvents.Drain();
        event.begin();
        try {
            disposals.batch(s, () -> {
                for (Release item : batch) {
                    try {
                        if (item instanceof Eviction) {
                            endOfLife.applyEviction((Eviction<K, V>) item, s);
                        } else if (((Entry<K, V>) item).release() == 0) {
                            endOfLife.reachedZero((Entry<K, V>) item, s);
                        }
                    } catch (Entry.DoubleRelease e) {
                        pool.report(PoolError.Kind.REFCOUNT_DOUBLE_RELEASE, null, e.getMessage(), e);
                    } catch (Throwable e) {
                        pool.report(PoolError.Kind.DRAINER_FAILED, null, "applying a deferred release failed", e);
                    }
                }
            });
        } finally {
            counters.drains.increment();
            event.pool = pool.name();
            event.batchSize = batch.size();
            event.commit();
        }
    }
}
