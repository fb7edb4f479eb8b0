package io.refpool.core.internal;

import io.refpool.core.EvictionCause;
import io.refpool.core.PoolError;
import java.util.ArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

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
 *   delayed    true     any other enqueue; refpool's timer thread hands the drain on after the delay
 *   either     false    the drain it scheduled, first thing when it runs, on the executor; or on
 *                      a drainer thread, run there by the flag's watch if the executor took it
 *                      and had not started it a drain delay (at most a second) later (a
 *                      discard policy drops it)
 *   delayed    false    the close, cancelling a delayed drain's timer before it fired
 *                      ({@link #cancelDelayedDrain})
 *
 *   a drain handed to the executor: one CAS on its own "started" decides between the executor's
 *   run and the watch's, so a dropped drain never keeps its flag up for good, and a late run by
 *   the executor does nothing; one watch per flag is armed at a time
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
 * threads shared with other pools are never held by this one. refpool's timer thread ({@link
 * Timers}) only hands a delayed drain to the library's own drainer threads ({@link DrainerThreads}); it never runs it,
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
    /** Whether drains handed to the executor are watched; off only in model-checking tests. */
    private volatile boolean watching = true;

    private final int drainThreshold;
    private final Schedule delayedScheduled = new Schedule();
    /** The delayed drain's timer while it may be armed, or {@code null}: cancelled at close. */
    private volatile ScheduledFuture<?> delayedTimer;

    private final Schedule urgentScheduled = new Schedule();

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
        enqueue(release, false);
    }

    /**
     * {@link #enqueue} from a thread of the library's own timers (the sweep of thread leases, the
     * leak detector): a
     * drain due at once is handed to a drainer thread, as the drain timer does, so this thread never
     * runs a drain nor calls the pool's executor, and no pool's disposer runs on it.
     */
    void enqueueFromTimer(Release release) {
        enqueue(release, true);
    }

    private void enqueue(Release release, boolean fromTimer) {
        int pending = queue.enqueue(release);
        boolean eviction = release instanceof Eviction;
        if ((pending >= drainThreshold || pool.isClosed()) && !eviction) {
            if (!urgentScheduled.get() && urgentScheduled.compareAndSet(false, true)) {
                if (fromTimer) {
                    handOffFromTimer(() -> submit(urgentScheduled));
                } else {
                    submit(urgentScheduled);
                }
            }
        } else if (!delayedScheduled.get() && delayedScheduled.compareAndSet(false, true)) {
            armTimer();
        }
    }

    private void armTimer() {
        ScheduledFuture<?> timer = later(drainDelayNanos, () -> submit(delayedScheduled));
        if (timer == null) {
            delayedScheduled.set(false); // the next enqueue or attach takes over
        } else {
            delayedTimer = timer;
        }
    }

    /**
     * At close, once the close applied what was pending: the delayed drain's timer, which would keep
     * the pool reachable for the drain delay, is cancelled. A release queued since is drained at
     * once (the pool is closed), but an eviction waits for a delayed drain: re-armed if one is pending.
     */
    void cancelDelayedDrain() {
        ScheduledFuture<?> timer = delayedTimer;
        if (timer != null && timer.cancel(false)) {
            delayedTimer = null;
            delayedScheduled.set(false);
            if (queue.isDirty() && delayedScheduled.compareAndSet(false, true)) {
                armTimer();
            }
        }
    }

    /**
     * Runs {@code task} on a drainer thread once {@code delayNanos} have passed.
     *
     * @return the timer, or {@code null} if it could not be armed
     */
    private ScheduledFuture<?> later(long delayNanos, Runnable task) {
        try {
            return Timers.schedule(() -> handOffFromTimer(task), delayNanos, TimeUnit.NANOSECONDS);
        } catch (Throwable timerFailed) {
            pool.report(PoolError.Kind.DRAINER_FAILED, null, "the drain timer could not be armed", timerFailed);
            return null;
        }
    }

    /** Runs on refpool's timer thread: a hand-off that cannot block, re-armed if it fails. */
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

    private void submit(Schedule schedule) {
        Drain drain = new Drain(schedule);
        boolean watched = watching;
        try {
            if (watched) {
                schedule.handedOver = drain; // before the watch's check below, which must see it
            }
            executor.execute(drain);
            if (watched) {
                watch(schedule);
            }
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

    void unwatchForTests() {
        watching = false;
    }

    /** The longest a watch waits: its timer holds the pool, which a long drain delay would keep after its close. */
    static final long MAX_WATCH_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** {@return how long after a hand-over a watch checks the drain: the drain delay, at most a second} */
    private long watchDelayNanos() {
        return Math.min(drainDelayNanos, MAX_WATCH_DELAY_NANOS);
    }

    /** Arms the schedule's watch unless one is armed already: one per schedule at a time. */
    private void watch(Schedule schedule) {
        if (schedule.watched.compareAndSet(false, true) && later(watchDelayNanos(), () -> check(schedule)) == null) {
            schedule.watched.set(false);
        }
    }

    /**
     * The watch, on a drainer thread: a drain the executor took and has not started (it dropped it,
     * or is that busy) runs here instead. The watch is disarmed before it reads the drain handed
     * over, and a submit hands over before it tries to arm one, so a drain handed over while this
     * watch was armed is either the one read here or has a watch of its own.
     */
    private void check(Schedule schedule) {
        schedule.watched.set(false);
        Drain drain = schedule.handedOver;
        if (drain != null && !drain.get()) {
            drain.run(); // its late run by the executor finds it started and does nothing
        }
    }

    /** What a drain clears: its flag, and the watch of the drains handed over for it. */
    private final class Schedule extends AtomicBoolean {
        private static final long serialVersionUID = 1L;

        /** The drain last handed to the executor. */
        transient volatile Drain handedOver;
        /** Whether a watch is armed. */
        final AtomicBoolean watched = new AtomicBoolean();
    }

    /** One drain handed to the executor; its value, started, decides between the executor's run and the watch's. */
    private final class Drain extends AtomicBoolean implements Runnable {
        private static final long serialVersionUID = 1L;

        private final transient Schedule schedule;

        Drain(Schedule schedule) {
            this.schedule = schedule;
        }

        @Override
        public void run() {
            if (compareAndSet(false, true)) {
                drain(schedule);
            }
        }
    }

    private void drain(Schedule scheduled) {
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
     * other threads took before it is applied too (those numbered below its own). Called from a
     * disposal on this thread (a disposer that flushes), it applies what is pending and does not
     * wait: the batch that runs the disposer is one of those it would wait for. A thread that stops
     * the world cannot give the gate up, and every batch out then belongs to a thread waiting for
     * it: such a flush applies what is pending and does not wait either. Nor does one in a {@code
     * GLOBAL} async step, for the same reason: it keeps the one gate (taking it back could wait for
     * work queued on its own thread), so another thread with a batch out has given the gate up
     * inside it and needs it back to finish.
     *
     * <p>Where a {@code GLOBAL} factory gives the gate up ({@link Attacher#yieldsGate}: a plain
     * {@code GLOBAL} attachment, not an async step), so does a flush, around its wait, taking it
     * back at the same depth after: the thread applying such a batch may have given the one gate up
     * inside it (its disposer's factory, or a {@code detached()} section) and need it back to
     * finish. So does a flush in any mode whose attachment is its own ({@code ownAttachment}: the
     * thread was not attached), which holds nothing else: in the shared modes that batch's thread
     * may need the gate back behind a {@code stopTheWorld()} queued for it, which waits for every
     * shared hold. Elsewhere a flush waits holding the gate: nested in the shared modes it may run
     * inside a factory (other threads wait for that creation holding their holds), a section (its
     * waiters hold theirs) or a function that {@code close()} promises to wait for, and none of
     * these may lose its hold unseen. Flushes take no lock of their own, so none waits for another
     * while it holds the gate, and none takes the gate back while another waits for it.
     *
     * <p>A flush interrupted while it waited leaves batches out; a later flush, numbered higher,
     * waits for them, as they were taken before it was called. A flush where {@code awaited} (this
     * thread runs a creation or revive check, which such a batch's disposer may be waiting for;
     * asked only when a batch is out) applies what is pending and waits for no other batch.
     *
     * @throws InterruptedException if interrupted while waiting for another thread's batch
     */
    void flush(AttachState s, boolean ownAttachment, BooleanSupplier awaited) throws InterruptedException {
        if (s.disposing || s.exclusive || (s.asyncStep && attacher.isGlobal())) {
            applyAll(s);
            return;
        }
        ReleaseQueue.Batch<Release> batch = queue.takeForFlush();
        long number = batch.number();
        apply(batch, s);
        if (!queue.hasOutUpTo(number) || awaited.getAsBoolean()) {
            return;
        }
        if (!(attacher.yieldsGate(s) || ownAttachment) || s.asyncStep) {
            queue.awaitOutUpTo(number);
            return;
        }
        InterruptedException interrupted = attacher.suspended(s, () -> {
            try {
                queue.awaitOutUpTo(number);
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        if (interrupted != null) {
            throw interrupted;
        }
    }

    /**
     * {@code close()}, attached ({@code ownAttachment}: by the close itself, exclusively in the shared
     * modes): applies what is pending and, where the attachment is the close's own, waits
     * uninterruptibly with the gate given up for the batches other threads took before, so that every
     * release of a handle closed before the close is applied before it disposes what is idle: the
     * thread applying such a batch may have given the gate up inside it (a disposer's {@code
     * detached()} section, or its {@code GLOBAL} factory) and need it back. A close nested in an
     * attachment (a factory's, a call's, a section's) waits for no batch, whose disposer may be
     * waiting for what that attachment holds; nor does one from a disposer, whose own batch may be
     * one of them, nor one where {@code awaited}: this thread runs a creation or revive check that
     * such a disposer may be waiting for (asked only when a batch is out).
     */
    void applyAllAtClose(AttachState s, boolean ownAttachment, BooleanSupplier awaited) {
        ReleaseQueue.Batch<Release> batch = queue.takeForFlush();
        long number = batch.number();
        apply(batch, s);
        if (ownAttachment && !s.disposing && queue.hasOutUpTo(number) && !awaited.getAsBoolean()) {
            attacher.suspended(s, () -> awaitOutUninterruptibly(number));
        }
    }

    /** Waits until no batch numbered up to {@code number} is out, keeping an interrupt for after. */
    private Void awaitOutUninterruptibly(long number) {
        Waits.uninterruptibly(() -> queue.awaitOutUpTo(number));
        return null;
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
        if (batch.isEmpty()) {
            return; // a flush with nothing pending: no batch was applied, so no drain is counted or recorded
        }
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
