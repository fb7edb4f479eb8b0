package io.refpool.core.internal;

import io.refpool.core.PoolFunction;
import io.refpool.sync.AsyncMutex;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One object's exclusive section: its own FIFO {@link AsyncMutex}, created by the first
 * {@code Handle.section()} (see {@link Entry#section()}), so objects that never use it pay nothing.
 * All handles to the object share it; different objects never contend.
 *
 * <pre>
 *   holder    to         by
 *   NONE      id of T    T's blocking enter was granted (set by T before enter returns)
 *   NONE      ASYNC      Handle.sectionAsync was granted (set before the stage completes)
 *   NONE      RESERVED   callAsync's section was granted (set before the stage completes)
 *   RESERVED  id of T    callAsync running its function on T
 *   any       NONE       the guard's close, before it releases the lock
 * </pre>
 *
 * <p>{@code holder} answers two questions and nothing else: "does this thread hold the section
 * already?" (its own write, so it reads it exactly: asking again throws instead of deadlocking) and
 * "may this thread use the object?" for strict access ({@link AccessChecks}). The lock alone decides
 * who holds the section. {@code ASYNC} admits any thread, as the guard of {@code sectionAsync} may be used on whichever
 * thread its continuation runs; {@code RESERVED} admits none, so between a {@code callAsync} grant
 * and the start of its function no bystander uses the object.
 * It is the holder's {@linkplain Thread#getId() thread id}, which no other thread ever has, rather
 * than the {@code Thread}: a {@code long} store needs no garbage collector barrier, and a reference
 * store into a section that has reached the old generation costs a fence under G1 on every entry.
 *
 * <p>A section guard ({@link SectionHold}) holds a reference of its own (count + 1 at entry, - 1 at
 * close), so the object stays alive while its section is held even if every handle closes meanwhile.
 */
final class Section {
    /** The holder of a free section. Thread ids are positive. */
    static final long NONE = 0L;

    /** The holder of a section granted to {@code sectionAsync}, which no thread holds: admits any thread. */
    static final long ASYNC = -1L;

    /** The holder of a section granted to {@code callAsync} whose function has not started: admits none. */
    static final long RESERVED = -2L;

    /** How many times a thread tries the lock before it queues: about a microsecond. */
    private static final int SPINS = 128;

    final AsyncMutex lock = new AsyncMutex();

    private static final VarHandle HOLDER =
            FieldHandles.find(MethodHandles.lookup(), Section.class, "holder", long.class);

    /**
     * Who holds the section, for the reentry and strict-access checks; see the table. Written with
     * release and read with acquire ordering: a thread reads its own writes, and the lock's own
     * acquire and release order the writes of successive holders, so no write needs a full fence.
     */
    @SuppressWarnings("unused") // accessed through HOLDER
    private long holder;

    long holder() {
        return (long) HOLDER.getAcquire(this);
    }

    void holder(long who) {
        HOLDER.setRelease(this, who);
    }

    /** Takes the section of {@code entry} for the calling thread, parking while another holds it. */
    static <K, V> Guard enter(Handles<K, V> handles, Entry<K, V> entry, CancellationToken token) {
        return enter(handles, entry, token, token.canBeCancelled() ? null : handles.defaultWait);
    }

    /**
     * {@code Handle.section(Duration)}: as {@link #enter(Handles, Entry, CancellationToken)}, the
     * wait limited to {@code timeout}; the timer is armed only if the section is taken.
     */
    static <K, V> Guard enterWithin(Handles<K, V> handles, Entry<K, V> entry, Duration timeout) {
        return enter(handles, entry, CancellationToken.none(), timeout);
    }

    /** Takes the section with a reference of its own, given back if the wait fails. */
    private static <K, V> Guard enter(
            Handles<K, V> handles, Entry<K, V> entry, CancellationToken token, Duration timeout) {
        AccessChecks.refuseUnattached(handles, entry);
        if (token.isCancellationRequested()) { // whether or not the section is free, as every wait does
            throw new CancellationException("section() on the object of key " + Keys.describe(entry.key) + " in pool '"
                    + handles.name() + "' with a token that was already cancelled");
        }
        Section section = entry.section();
        long me = Thread.currentThread().getId();
        if (section.holder() == me) {
            throw reentry("section()", entry, handles.name());
        }
        retain(entry);
        try {
            long begun = handles.clock();
            // a busy section in GLOBAL mode is waited for with the gate given up: its holder may have
            // given it up too (in a factory, or detached()) and needs it back to finish
            Guard lockGuard = section.tryTake(me)
                    ? null
                    : handles.waitForSection(() -> timeout == null
                            ? section.lockFor(me, entry, token)
                            : section.lockWithin(me, entry, timeout, handles.name()));
            handles.sectionWaited(begun);
            return SectionHold.hooked(handles, entry, section, lockGuard);
        } catch (Throwable t) {
            handles.release(entry, null);
            Waits.counted(t, handles.pool);
            if (t instanceof CancellationException && token.isCancellationRequested()) { // named after the section
                throw (RuntimeException) Waits.named(t, name(handles, entry));
            }
            throw t;
        }
    }

    /** Takes the section for the thread whose id is {@code me} if it is free; never waits. */
    private boolean tryTake(long me) {
        if (lock.tryLock()) {
            holder(me);
            return true;
        }
        return false;
    }

    /**
     * {@link #lockFor} waiting at most {@code timeout}; a free section is taken with no timer armed,
     * and a zero timeout does not wait.
     */
    private Guard lockWithin(long me, Entry<?, ?> entry, Duration timeout, String pool) {
        if (lock.tryLock()) {
            holder(me);
            return null;
        }
        String resource = "the section of key " + Keys.describe(entry.key) + " in pool '" + pool + "'";
        if (timeout.isZero()) {
            throw new WaitTimeoutException(resource, timeout);
        }
        CancellationSource timer = Waits.timer(timeout);
        try {
            return lockFor(me, entry, timer.token());
        } catch (CancellationException e) {
            throw Waits.ended(e, timer, resource, timeout);
        } finally {
            timer.close();
        }
    }

    /**
     * Takes the lock for the thread whose id is {@code me}, which does not hold it yet (the caller
     * checked), and records {@code me} as the holder. A short bounded spin on {@code tryLock} comes
     * first: a section is typically held for a short call, and a thread that queued would pay a park
     * and an unpark for it. The spin never passes a queued waiter ({@code tryLock} fails while anyone is
     * queued), so the queue stays FIFO.
     *
     * @return the lock's guard if the thread had to queue, or {@code null} if it took the lock raw
     *     (release with {@link #unlock})
     */
    Guard lockFor(long me, Entry<?, ?> entry, CancellationToken token) {
        if (lock.tryLock()) { // the free section, kept small enough to inline into pool.call
            holder(me);
            return null;
        }
        return lockContended(me, entry, token);
    }

    private Guard lockContended(long me, Entry<?, ?> entry, CancellationToken token) {
        for (int spin = 1; spin < SPINS; spin++) {
            Thread.onSpinWait();
            if (lock.tryLock()) {
                holder(me);
                return null;
            }
        }
        try {
            Guard lockGuard = lock.acquireBlocking(token);
            holder(me);
            return lockGuard;
        } catch (InterruptedException e) {
            throw Waits.interrupted("the section of key " + Keys.describe(entry.key), e);
        }
    }

    /**
     * Takes this section (of {@code entry}) for the calling thread, which a handle of its own keeps
     * alive: no reference taken, no guard allocated. Release with {@link #unlock}.
     *
     * @return as {@link #lockFor}
     * @throws IllegalStateException if the calling thread holds this section already
     */
    Guard enter(Entry<?, ?> entry, PoolState pool) {
        long me = Thread.currentThread().getId();
        if (holder() == me) {
            throw reentry(CALL, entry, pool.name());
        }
        return lockFor(me, entry, CancellationToken.none());
    }

    /**
     * Runs {@code fn} on the object of {@code entry} in its section, which the calling thread takes
     * and releases around it; a reference of the caller's keeps the object alive.
     */
    static <V, T, E extends Exception> T apply(
            Entry<?, V> entry, PoolFunction<? super V, ? extends T, E> fn, PoolState pool) throws E {
        Section section = entry.section();
        Guard lockGuard = section.enter(entry, pool);
        try {
            return fn.apply(entry.value);
        } finally {
            section.unlock(lockGuard);
        }
    }

    /** {@link #apply(Entry, PoolFunction, PoolState)} waiting at most {@code wait} for the section. */
    static <V, T, E extends Exception> T apply(
            Entry<?, V> entry, PoolFunction<? super V, ? extends T, E> fn, Duration wait, PoolState pool) throws E {
        Section section = entry.section();
        Guard lockGuard = section.enterWithin(entry, wait, pool);
        try {
            return fn.apply(entry.value);
        } finally {
            section.unlock(lockGuard);
        }
    }

    /**
     * {@code Handle.call} with section hooks: {@link #apply(Entry, PoolFunction, PoolState)} (waiting at most
     * {@code wait} if not null) with the enter hook after the section is taken and the leave hook
     * before it is released; an enter hook that throws leaves it free.
     */
    static <K, V, T, E extends Exception> T applyHooked(
            Handles<K, V> handles,
            Entry<K, V> entry,
            PoolFunction<? super V, ? extends T, E> fn,
            Duration wait,
            RunControl<K, V> runs)
            throws E {
        Section section = entry.section();
        long begun = handles.clock();
        Guard lockGuard =
                wait == null ? section.enter(entry, handles.pool) : section.enterWithin(entry, wait, handles.pool);
        handles.sectionWaited(begun, fn);
        try {
            runs.enter(entry);
            try {
                return runs.apply(entry, fn, CancellationToken.none(), null, 0L); // interruptible as pool.call
            } finally {
                runs.leave(entry);
            }
        } finally {
            section.unlock(lockGuard);
        }
    }

    /**
     * Refuses, as {@link #enter(Entry, PoolState)} does, if the calling thread holds this section (of
     * {@code entry}): a two-key call checks its second section before it waits for its first.
     */
    void refuseHeldByThisThread(Entry<?, ?> entry, PoolState pool) {
        if (holder() == Thread.currentThread().getId()) {
            throw reentry(CALL, entry, pool.name());
        }
    }

    /**
     * {@link #enter(Entry, PoolState)} waiting at most {@code timeout}; a free section is taken with no timer
     * armed. A timeout is counted by {@code pool}.
     */
    Guard enterWithin(Entry<?, ?> entry, Duration timeout, PoolState pool) {
        long me = Thread.currentThread().getId();
        if (holder() == me) {
            throw reentry(CALL, entry, pool.name());
        }
        try {
            return lockWithin(me, entry, timeout, pool.name());
        } catch (WaitTimeoutException e) {
            throw Waits.counted(e, pool);
        }
    }

    /** Releases a hold taken by {@link #lockFor}: clears the holder, then the lock. */
    void unlock(Guard lockGuard) {
        holder(NONE);
        if (lockGuard != null) {
            lockGuard.close();
        } else {
            lock.unlock();
        }
    }

    /**
     * Takes the section of {@code entry} for an async caller: the stage completes with its guard on
     * the thread that released the section (at once if free). A caller that completes or cancels
     * the stage itself ends the wait; a grant that lands anyway is given back. {@code forCall}: the
     * section of a {@code callAsync}, recorded as {@code RESERVED} until its function runs; its steps
     * run on whichever thread granted the step before, which says nothing of the caller. Otherwise
     * (a caller's own {@code sectionAsync}) it fails if the calling thread holds the section. The
     * wait is timed as a blocking one is, if timings are on, and told to {@code fn} (a call's
     * function, or {@code null}).
     */
    static <K, V> CompletionStage<Guard> enterAsync(
            Handles<K, V> handles, Entry<K, V> entry, CancellationToken token, boolean forCall, Object fn) {
        if (token.isCancellationRequested()) {
            return CompletableFuture.failedFuture(new CancellationException("sectionAsync() on the object of key "
                    + Keys.describe(entry.key) + " in pool '" + handles.name() + "' with a token that was already"
                    + " cancelled"));
        }
        long granted = forCall ? RESERVED : ASYNC;
        Section section = entry.section();
        if (!forCall && section.holder() == Thread.currentThread().getId()) {
            return CompletableFuture.failedFuture(reentry("sectionAsync()", entry, handles.name()));
        }
        try {
            retain(entry);
        } catch (IllegalStateException e) {
            return CompletableFuture.failedFuture(e);
        }
        long begun = handles.clock();
        if (section.lock.tryLock()) {
            section.holder(granted);
            handles.sectionWaited(begun, fn);
            if (forCall) {
                return CompletableFuture.completedStage(new SectionHold<>(handles, entry, section, null, null));
            }
            try {
                return CompletableFuture.completedStage(SectionHold.hooked(handles, entry, section, null));
            } catch (Throwable t) {
                handles.release(entry, null);
                return CompletableFuture.failedFuture(t);
            }
        }
        CompletableFuture<Guard> result = new CompletableFuture<>();
        CompletableFuture<Guard> wait = section.lock.acquire(token).toCompletableFuture();
        wait.whenComplete((lockGuard, failure) -> {
            if (failure != null) {
                handles.release(entry, null);
                result.completeExceptionally(Waits.named(Waits.unwrapped(failure), name(handles, entry)));
                return;
            }
            section.holder(granted);
            handles.sectionWaited(begun, fn);
            SectionHold<K, V> held;
            if (forCall) {
                held = new SectionHold<>(handles, entry, section, lockGuard, null);
            } else {
                try {
                    held = SectionHold.hooked(handles, entry, section, lockGuard);
                } catch (Throwable t) {
                    handles.release(entry, null);
                    result.completeExceptionally(t);
                    return;
                }
            }
            if (!result.complete(held)) {
                held.close(); // the caller gave up first
            }
        });
        // settled by the caller (a cancel, or a value of its own): ends the wait, and a grant that won
        // the race arrives above and is given back; settled by the grant, this ends nothing
        result.whenComplete((held, failure) -> wait.cancel(false));
        return result;
    }

    /** {@return the section of {@code entry}, as messages name it} */
    private static String name(Handles<?, ?> handles, Entry<?, ?> entry) {
        return "the section of key " + Keys.describe(entry.key) + " in pool '" + handles.name() + "'";
    }

    /** Takes the section's own reference, as {@code Handle.share()} does ({@link Entry#retainForHolder}). */
    private static <K, V> void retain(Entry<K, V> entry) {
        entry.retainForHolder("section()");
    }

    /** How {@link #reentry} names a call of a function in the section ({@code call}, {@code run}, {@code Handle.call}). */
    private static final String CALL = "a call";

    private static IllegalStateException reentry(String what, Entry<?, ?> entry, String pool) {
        return new IllegalStateException(
                what + " on the object of key " + Keys.describe(entry.key) + " in pool '" + pool
                        + "': thread " + Threads.describe(Thread.currentThread())
                        + " already holds its section, and a second hold would wait for itself");
    }
}
