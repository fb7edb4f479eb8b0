package io.refpool.sync.internal;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.sync.internal.QueueHooks.Point;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one FIFO waiter queue under {@code AsyncMutex}, {@code AsyncSemaphore} and
 * {@code AsyncSharedMutex}: a lock's state word plus the queue of those waiting for it.
 *
 * <h2>Implementation notes</h2>
 *
 * <p><b>State.</b> Each lock keeps its whole state in one {@code long} owned by this class. The
 * subclass gives the meaning of the low bits (locked, permits, readers, writer) through
 * {@link #isEligible}, {@link #assigned} and {@link #released}; bit {@link #QUEUED} is common to all
 * and is set exactly while the queue is non-empty (it is changed only under the queue lock, in the
 * same CAS that links the first waiter's way in or pops the last one). Every fast path refuses to
 * acquire while {@code QUEUED} is set, so nobody barges past a waiter: {@code tryLock} fails while
 * anyone is queued.
 *
 * <p><b>Contended acquire.</b> Only after the fast-path CAS failed is a {@link Waiter} allocated
 * (node, future and guard in one object), and before the queue lock is taken: a failed allocation
 * leaves lock and queue untouched. The token's callback is registered next, still outside the lock.
 * Under the queue lock the state is tried once more (the <em>locked recheck</em>); a waiter that
 * wins there owns the lock without being published. Otherwise the same CAS sets {@code QUEUED} and
 * the waiter is linked at the tail. Because every release that sees {@code QUEUED} takes the queue
 * lock before it looks at the queue, and the CAS that sets {@code QUEUED} competes with the
 * release's CAS on the same word, a release either frees the lock before the recheck (which then
 * wins) or sees the waiter: no wakeup is lost.
 *
 * <p><b>Release and handoff.</b> A release that sees {@code QUEUED} takes the queue lock and, in one
 * CAS, gives the resource up and assigns it to the eligible waiters at the head (one writer or
 * mutex owner, every reader up to the next writer, or semaphore requests while permits last, never
 * skipping a head that does not fit), clearing {@code QUEUED} if they were the last. The popped
 * waiters are granted after the queue lock is released.
 *
 * <p><b>Two kinds of holder.</b> A share is held either through a {@link Guard} (every waiter is
 * granted one, and so is every acquire that returns one) or through the lock's raw low-level pair
 * ({@code tryLock}/{@code unlock}, {@code tryAcquirePermits}/{@code release}), and the state word
 * tells the two apart where it has the bits to: {@link #assigned} always counts a guard's share.
 * A guard gives its share back exactly once, through {@link #release} and {@link #released}; a raw
 * call goes through {@link #releasedRaw}, which refuses a share only guards hold. A raw caller
 * cannot be told from another raw caller, but it can be told from a guard, and after a handoff the
 * new holder is always a guard, so a second raw release after it is refused instead of handing the
 * lock on again.
 *
 * <p><b>Grant versus cancel.</b> A waiter's phase moves {@code WAITING → GRANTED} or
 * {@code WAITING → CANCELLED}, and one CAS decides (see {@link Waiter}). A cancel that wins while
 * the waiter is still linked unlinks it in O(1) and reassigns whatever its departure makes
 * eligible (a cancelled writer re-admits the readers behind it). A cancel that wins after the waiter
 * was popped leaves the releaser's grant CAS failing, and the resource the release assigned to that
 * waiter must be released again, which hands it to the next waiter or frees it. Both the canceller
 * and the failing releaser go to the queue lock for that; the first to get there releases the share
 * (the waiter's {@code holdsAssignedShare} says whether it is still to do), so the share is handed
 * on before either call returns: once a cancel has returned, no cancelled waiter holds readers or
 * writers back. Ownership is never lost.
 *
 * <p><b>Outside the lock.</b> No future is completed and no user code runs under the queue lock.
 * Blocking waiters are unparked; async waiters are settled through a per-thread {@link Trampoline},
 * so a chain of continuations that release and re-acquire runs in a loop, not a recursion. A
 * continuation that parks in a blocking acquire first runs the settles its thread deferred, since
 * the waiters they grant may be the ones holding what it waits for.
 */
public abstract class WaiterQueue {
    /** Set exactly while at least one waiter is linked. */
    public static final long QUEUED = 1L << 62;

    private static final VarHandle STATE = VarHandles.field(MethodHandles.lookup(), "state", long.class);
    private static final VarHandle SPINNERS = VarHandles.field(MethodHandles.lookup(), "spinners", int.class);

    /**
     * Runs {@code release} with the settles it causes run before this returns, even inside a
     * continuation; settles deferred before it stay deferred. For a continuation about to block
     * some other way.
     */
    public static void settlingNow(Runnable release) {
        Trampoline.settlingNow(release);
    }

    /**
     * How many {@code onSpinWait} rounds a queued blocking waiter spins on its own phase before it
     * parks: a few microseconds, less than a park and the wake-up it needs cost, and more than a
     * short critical section.
     */
    private static final int SPIN_ROUNDS = 1 << 11;

    /** The least a spin's budget is, whatever the estimate: a handoff between running threads. */
    private static final int MIN_SPIN_ROUNDS = 1 << 6;

    /** The most a virtual thread spins: about the cost of its park, which only unmounts it. */
    private static final int VIRTUAL_SPIN_ROUNDS = 1 << 7;

    /**
     * A timed wait with less than this left spins to its deadline instead of parking: a timed park
     * that short would sleep for the timer's slack (tens of microseconds on Linux), not the wait.
     */
    private static final long SHORT_WAIT_NANOS = 1_000L;

    /** A timed waiter's spin reads the clock once per this many rounds (a power of two). */
    private static final int DEADLINE_CHECK_ROUNDS = 1 << 4;

    /** At most this many blocking waiters of one queue spin at once: one fewer than the cores. */
    private static final int MAX_SPINNERS = Runtime.getRuntime().availableProcessors() - 1;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile long state;

    /** How many rounds the next spinning waiter spins (adaptive, see spinBeforeParking; plain, racy). */
    private int spinBudget = SPIN_ROUNDS;

    /** Blocking waiters of this queue spinning before their first park, see {@link #spinBeforeParking}. */
    @SuppressWarnings("unused") // accessed through SPINNERS
    private volatile int spinners;

    /** Guards head, tail, the links and {@code linked} of every waiter, and length. */
    private final ReentrantLock queueLock = new ReentrantLock();

    private Waiter head;
    private Waiter tail;
    private volatile int length;
    private volatile QueueHooks hooks;

    protected WaiterQueue(long initialState) {
        STATE.setRelease(this, initialState);
    }

    // ---------------------------------------------------------------- the lock's policy

    /**
     * {@return whether a waiter asking for {@code arg} may take the resource in state {@code s}},
     * ignoring {@link #QUEUED}.
     */
    protected abstract boolean isEligible(long s, int arg);

    /** {@return state {@code s} after granting {@code arg}; only called when eligible} */
    protected abstract long assigned(long s, int arg);

    /**
     * {@return state {@code s} after a guard gave {@code arg} back}
     *
     * @throws IllegalStateException if no guard holds {@code arg} in {@code s}; nothing changed
     */
    protected abstract long released(long s, int arg);

    /**
     * {@return state {@code s} after the lock's raw release (unlock, release of permits) gave
     * {@code arg} back}
     *
     * @throws IllegalStateException if {@code arg} is not held in {@code s} other than through
     *     guards; nothing changed
     */
    protected abstract long releasedRaw(long s, int arg);

    /**
     * {@return {@code s} without the exclusive bit {@code held}}: the raw {@code unlock()} of a hold
     * taken with {@code tryLock()}, refused if nobody holds it ({@code notHeld} says so) or a guard
     * holds it ({@code guardHeld} set)
     */
    protected final long rawUnlocked(long s, long held, long guardHeld, String notHeld) {
        if ((s & held) == 0) {
            throw new IllegalStateException("unlock() on " + describe() + " " + notHeld);
        }
        if ((s & guardHeld) != 0) {
            throw new IllegalStateException("unlock() on " + describe() + " that is held through a Guard: unlock()"
                    + " releases only a lock taken with tryLock(), and the guard's close() releases its own");
        }
        return s & ~held;
    }

    /**
     * Called under the queue lock just before a waiter for {@code arg} would be queued in state
     * {@code s}; throws to refuse a wait that could never end. Nothing has changed yet.
     */
    protected void checkMayWait(long s, int arg) {}

    /**
     * Releases {@code arg} held through a guard: the lock's own fast path, then {@link #releaseSlow}
     * if queued. Called once per guard, by its {@code close()}.
     */
    public abstract void release(int arg);

    // ---------------------------------------------------------------- state access

    /** {@return the state word, read with acquire ordering} */
    public final long state() {
        return (long) STATE.getAcquire(this);
    }

    /**
     * {@return the state word, read with volatile (sequentially consistent) ordering}: for a
     * caller that pairs this read with its own earlier volatile write in a Dekker handshake, where
     * an acquire read could be ordered before that write
     */
    protected final long stateVolatile() {
        return (long) STATE.getVolatile(this);
    }

    /** {@return whether the CAS from {@code expected} to {@code next} succeeded} */
    protected final boolean casState(long expected, long next) {
        return STATE.compareAndSet(this, expected, next);
    }

    /** {@return how many rounds the next spinning waiter spins} (for the adaptive spin's tests) */
    int spinBudget() {
        return spinBudget;
    }

    /**
     * Runs the settles the calling thread deferred inside a continuation, for a front about to park
     * on something other than this queue: the waiters those settles grant may be what it waits for.
     */
    public static void runDeferredSettlesBeforeParking() {
        Trampoline.runDeferredBeforeParking();
    }

    /** {@return whether the calling thread deferred settles inside a continuation that have not run yet} */
    public static boolean hasDeferredSettles() {
        return Trampoline.hasDeferred();
    }

    /** {@return the number of linked waiters (diagnostics)} */
    public final int queueLength() {
        return length;
    }

    /** Installs the test seam; {@code null} turns it off. */
    public final void setHooks(QueueHooks hooks) {
        this.hooks = hooks;
    }

    final void hook(Point point) {
        QueueHooks h = hooks;
        if (h != null) {
            h.at(point);
        }
    }

    // ---------------------------------------------------------------- acquire

    /**
     * The contended async acquire, entered after the fast path failed. A wait the lock refuses
     * ({@link #checkMayWait}) fails the returned stage: an async acquire fails only through its
     * stage. A failed allocation of the waiter is not the call's outcome but the JVM's, and is
     * thrown.
     *
     * @return a completed guard stage if the locked recheck won, otherwise the waiter
     */
    public final CompletionStage<Guard> acquireAsync(int arg, CancellationToken token) {
        hook(Point.AFTER_FAST_PATH_FAILED);
        Waiter waiter = newWaiter(arg, null);
        registerCancellation(waiter, token);
        Publication outcome;
        try {
            outcome = publishOrAbandon(waiter);
        } catch (IllegalStateException refused) { // checkMayWait's: the wait could never end
            return CompletableFuture.failedFuture(refused);
        }
        if (outcome == Publication.ACQUIRED) {
            return new ReadyGuard(this, arg);
        }
        return waiter; // queued, or cancelled by the token before publication and settled by it
    }

    /**
     * The contended blocking acquire, entered after the fast path failed; parks until granted.
     *
     * @param timeoutNanos the longest wait, or a negative number for no limit
     * @return the guard, or {@code null} if the timeout elapsed first
     * @throws InterruptedException if interrupted before the grant; the wait is cancelled
     * @throws CancellationException if the token was cancelled before the grant
     */
    public final Guard acquireBlocking(int arg, CancellationToken token, long timeoutNanos)
            throws InterruptedException {
        return awaitGrant(arg, token, timeoutNanos) ? new ReadyGuard(this, arg) : null;
    }

    /**
     * The contended blocking acquire without a time limit, entered after the fast path failed;
     * parks until granted. The caller then makes the guard with {@link #readyGuard}, the same
     * allocation its fast path makes: with one allocation site, and no guard of another kind
     * merging with it, the JIT can scalar-replace the guard of an uncontended acquire however
     * often this slow path has run elsewhere.
     *
     * @throws InterruptedException if interrupted before the grant; the wait is cancelled
     * @throws CancellationException if the token was cancelled before the grant
     */
    public final void awaitGrant(int arg, CancellationToken token) throws InterruptedException {
        awaitGrant(arg, token, -1L);
    }

    /** {@return true once granted, false if the timeout elapsed first} */
    private boolean awaitGrant(int arg, CancellationToken token, long timeoutNanos) throws InterruptedException {
        hook(Point.AFTER_FAST_PATH_FAILED);
        // inside a continuation, the waiters this thread's own releases granted are settled first:
        // they may be what holds the lock; the locked recheck then sees what they released
        Trampoline.runDeferredBeforeParking();
        Waiter waiter = newWaiter(arg, Thread.currentThread());
        registerCancellation(waiter, token);
        Publication outcome = publishOrAbandon(waiter);
        if (outcome == Publication.ACQUIRED) {
            return true;
        }
        long deadline = timeoutNanos < 0 ? 0L : System.nanoTime() + timeoutNanos;
        if (outcome == Publication.QUEUED_FIRST && (timeoutNanos < 0 || timeoutNanos >= SHORT_WAIT_NANOS)) {
            spinBeforeParking(waiter, timeoutNanos >= 0, deadline);
        }
        if (waiter.phase() == Waiter.WAITING) {
            hook(Point.BEFORE_PARKED_FLAG);
            waiter.publishParked(); // then the phase is read again below, before any park
        }
        boolean interrupted = false;
        boolean firstPark = true;
        for (; ; ) {
            int phase = waiter.phase();
            if (phase == Waiter.GRANTED) {
                waiter.passWake(); // the next waiter of this grant's batch, if any
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                return true;
            }
            if (phase == Waiter.CANCELLED) {
                // only the token cancels a blocking wait from outside (timeout and interrupt are this
                // thread's own, and return above); a spurious wake-up can read the phase before the
                // canceller has written the cause, so the cause is not relied on
                if (interrupted) {
                    Thread.currentThread().interrupt(); // the token won the race; the interrupt is kept
                }
                Throwable cause = waiter.cancelCause();
                if (cause instanceof CancellationException) {
                    throw (CancellationException) cause;
                }
                throw new CancellationException("cancelled while waiting for " + describe());
            }
            if (firstPark) {
                firstPark = false;
                hook(Point.BEFORE_PARK);
            }
            if (timeoutNanos >= 0) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0L) {
                    if (waiter.tryCancel(null)) {
                        afterCancel(waiter);
                        return false;
                    }
                    continue; // the grant won: the next pass returns it
                }
                if (remaining < SHORT_WAIT_NANOS) {
                    Thread.onSpinWait(); // a park this short would sleep for the timer's slack instead
                    continue;
                }
                LockSupport.parkNanos(this, remaining);
            } else {
                LockSupport.park(this);
            }
            if (Thread.interrupted()) {
                if (waiter.tryCancel(null)) {
                    afterCancel(waiter);
                    throw new InterruptedException("interrupted while waiting for " + describe());
                }
                interrupted = true; // the grant or the token won; keep the interrupt for the caller
            }
        }
    }

    /**
     * Spins on the queued waiter's own phase before it parks: a grant that lands meanwhile (the
     * holder's critical section was short) is taken without a park, an unpark and the scheduler's
     * wake-up latency, and the granter, seeing no parked flag, does not unpark at all. It only
     * delays the park: the phase is re-read after the flag is published.
     *
     * <p>Only a waiter that joined an empty queue spins (the next grant is its own; one further
     * back would wait out several holds). The budget adapts to the queue's recent handoffs, as
     * HotSpot's adaptive spinning for monitors does: a spin that meets its grant raises
     * {@code spinBudget} by half (up to {@link #SPIN_ROUNDS}), one that ends in a park lowers it by
     * an eighth (down to {@link #MIN_SPIN_ROUNDS}), so short holds keep a budget that catches them
     * and holds longer than any budget soon cost little spinning. No more threads spin than there
     * are other cores, so a spinner never keeps the holder off a core, and a virtual thread spins
     * at most {@link #VIRTUAL_SPIN_ROUNDS}, about what its cheap park costs, since it spins on a
     * carrier other virtual threads need. A timed waiter stops spinning at its deadline.
     */
    private void spinBeforeParking(Waiter waiter, boolean timed, long deadline) {
        if (MAX_SPINNERS <= 0) {
            return;
        }
        if ((int) SPINNERS.getAndAdd(this, 1) >= MAX_SPINNERS) {
            SPINNERS.getAndAdd(this, -1);
            return;
        }
        try {
            int budget = spinBudget;
            int rounds =
                    VirtualThreads.isVirtual(Thread.currentThread()) ? Math.min(budget, VIRTUAL_SPIN_ROUNDS) : budget;
            while (rounds > 0 && waiter.phase() == Waiter.WAITING) {
                Thread.onSpinWait();
                rounds--;
                if (timed && (rounds & (DEADLINE_CHECK_ROUNDS - 1)) == 0 && System.nanoTime() - deadline >= 0) {
                    return; // the waiter's own deadline, which says nothing of the holds: budget kept
                }
            }
            // racy on purpose: a lost update only makes the next budget a little off
            spinBudget = waiter.phase() != Waiter.WAITING
                    ? Math.min(SPIN_ROUNDS, budget + (budget >> 1) + MIN_SPIN_ROUNDS)
                    : Math.max(MIN_SPIN_ROUNDS, budget - (budget >> 3));
        } finally {
            SPINNERS.getAndAdd(this, -1);
        }
    }

    private Waiter newWaiter(int arg, Thread thread) {
        hook(Point.WAITER_ALLOCATION);
        Waiter waiter = new Waiter(this, arg, thread);
        hook(Point.AFTER_WAITER_ALLOCATED);
        return waiter;
    }

    private static void registerCancellation(Waiter waiter, CancellationToken token) {
        if (token.canBeCancelled()) {
            waiter.registration = token.register(waiter::cancelByToken);
        }
    }

    private enum Publication {
        ACQUIRED,
        /** Linked behind other waiters. */
        QUEUED,
        /** Linked into an empty queue: the next grant is its own. */
        QUEUED_FIRST,
        CANCELLED
    }

    /** Publishes, or retires the waiter (and its token registration) if publication is refused. */
    private Publication publishOrAbandon(Waiter waiter) {
        try {
            return publish(waiter);
        } catch (RuntimeException | Error refused) {
            waiter.abandon();
            throw refused;
        }
    }

    /** The locked recheck, then publication at the tail. */
    private Publication publish(Waiter waiter) {
        queueLock.lock();
        try {
            if (waiter.phase() != Waiter.WAITING) {
                return Publication.CANCELLED; // the token fired before publication
            }
            for (; ; ) {
                long s = state();
                if ((s & QUEUED) == 0 && isEligible(s, waiter.arg)) {
                    if (casState(s, assigned(s, waiter.arg))) {
                        waiter.abandon();
                        return Publication.ACQUIRED;
                    }
                    continue; // lost to a concurrent change; retry, never park on it
                }
                checkMayWait(s, waiter.arg);
                if ((s & QUEUED) != 0 || casState(s, s | QUEUED)) {
                    break;
                }
            }
            hook(Point.BEFORE_PUBLICATION);
            Waiter last = tail;
            waiter.prev = last;
            if (last == null) {
                head = waiter;
            } else {
                last.next = waiter;
            }
            tail = waiter;
            waiter.linked = true;
            length = length + 1;
            return last == null ? Publication.QUEUED_FIRST : Publication.QUEUED;
        } finally {
            queueLock.unlock();
        }
    }

    // ---------------------------------------------------------------- release

    /** What {@link #assignLocked} gives back before it serves the head. */
    private enum Giving {
        /** Nothing: a cancelled waiter left the queue, and whoever it held back is served. */
        NOTHING,
        /** A share held through a guard: its close, or the share of a popped waiter whose cancel won. */
        GUARDED_SHARE,
        /** A share of the raw low-level pair. */
        RAW_SHARE
    }

    /**
     * Releases a hold of {@code arg} after the caller's fast CAS missed: refused by
     * {@link #released} (or {@link #releasedRaw} for a hold taken without a guard) if it is not held
     * so, changing nothing; handed to the head waiter if anyone is queued.
     */
    protected final void releaseHeld(int arg, boolean raw) {
        for (; ; ) {
            long s = state();
            long next = raw ? releasedRaw(s, arg) : released(s, arg);
            if ((s & QUEUED) != 0) {
                if (raw) {
                    releaseRawSlow(arg);
                } else {
                    releaseSlow(arg);
                }
                return;
            }
            if (casState(s, next)) {
                return;
            }
        }
    }

    protected final void releaseSlow(int arg) {
        releaseSlow(arg, Giving.GUARDED_SHARE);
    }

    /** The contended raw release: as {@link #releaseSlow}, checked by {@link #releasedRaw}. */
    protected final void releaseRawSlow(int arg) {
        releaseSlow(arg, Giving.RAW_SHARE);
    }

    private void releaseSlow(int arg, Giving giving) {
        Waiter popped;
        queueLock.lock();
        try {
            popped = assignLocked(arg, giving);
        } finally {
            queueLock.unlock();
        }
        grant(popped);
    }

    /**
     * Pops the head waiters that the state, after giving back what {@code giving} says, can serve,
     * in one CAS that also clears {@code QUEUED} when the queue empties.
     *
     * @return the popped waiters, chained through {@code next}, or {@code null}
     * @throws IllegalStateException if the release is refused; nothing changed
     */
    private Waiter assignLocked(int arg, Giving giving) {
        for (; ; ) {
            long s = state();
            long next =
                    switch (giving) {
                        case NOTHING -> s;
                        case GUARDED_SHARE -> released(s, arg);
                        case RAW_SHARE -> releasedRaw(s, arg);
                    };
            Waiter last = null;
            Waiter w = head;
            while (w != null && isEligible(next, w.arg)) {
                next = assigned(next, w.arg);
                last = w;
                w = w.next;
            }
            if (w == null) {
                next &= ~QUEUED;
            }
            if (!casState(s, next)) {
                continue; // a reader left or arrived through its lock-free path; recompute
            }
            if (last == null) {
                return null;
            }
            Waiter first = head;
            int count = 0;
            for (Waiter p = first; p != w; p = p.next) {
                p.linked = false;
                p.holdsAssignedShare = true;
                count++;
            }
            last.next = null;
            head = w;
            if (w == null) {
                tail = null;
            } else {
                w.prev = null;
            }
            length = length - count;
            return first;
        }
    }

    /**
     * Grants each popped waiter outside the queue lock. A waiter whose cancellation won after it
     * was popped gets its share released again, here or by its canceller, whichever takes the queue
     * lock first; the release may pop more waiters, and they join the walk at its end, behind the
     * waiters popped before them. (A canceller that hands the share back first grants what it pops
     * itself, before it returns: a cancel is prompt, and those waiters may then complete before
     * undecided ones of this walk.)
     *
     * <p>Every popped waiter is decided before any future is settled: settling runs the caller's
     * continuations, and a continuation must not run while waiters served before it, by the same
     * release, are still undecided (they would complete after waiters queued behind them).
     *
     * <p>Of the blocking waiters granted, only the first is woken here, and only if it parked; each
     * of them wakes the next when it runs ({@link Waiter#passWake}). A release that admits a batch of
     * readers so pays one unpark, and the woken readers do not preempt the releasing writer one by
     * one on a machine with few cores.
     */
    private void grant(Waiter chain) {
        Waiter settleFirst = null;
        Waiter settleLast = null;
        Waiter wakeFirst = null;
        Waiter wakeLast = null;
        Waiter w = chain;
        while (w != null) {
            Waiter next = w.next;
            w.next = null;
            w.prev = null;
            hook(Point.BETWEEN_POP_AND_COMPLETION);
            if (w.tryGrant()) {
                w.unregister();
                if (w.isBlocking()) {
                    if (wakeLast == null) {
                        wakeFirst = w;
                    } else if (!wakeLast.linkWake(w)) {
                        w.wakeIfParked(); // the one before already ran and passed its wake-up on
                    }
                    wakeLast = w;
                } else {
                    // an async waiter: settled below, in order, once every popped waiter is decided
                    if (settleLast == null) {
                        settleFirst = w;
                    } else {
                        settleLast.next = w;
                    }
                    settleLast = w;
                }
            } else {
                Waiter more;
                queueLock.lock();
                try {
                    more = releaseAssignedShareLocked(w);
                } finally {
                    queueLock.unlock();
                }
                next = append(next, more); // behind the waiters popped before them
            }
            w = next;
        }
        if (wakeFirst != null) {
            wakeFirst.wakeIfParked();
        }
        if (settleFirst != null) {
            Trampoline.settleInOrder(settleFirst);
        }
    }

    /** {@return {@code chain} with {@code more} after its last waiter}; either may be {@code null} */
    private static Waiter append(Waiter chain, Waiter more) {
        if (chain == null) {
            return more;
        }
        Waiter end = chain;
        while (end.next != null) {
            end = end.next;
        }
        end.next = more;
        return chain;
    }

    // ---------------------------------------------------------------- cancel

    /**
     * Called by whoever won a waiter's {@code WAITING → CANCELLED} CAS: unlinks it if it is still
     * queued, or releases the share a release already assigned to it, and grants what its departure
     * made eligible. Returns only once that is done.
     */
    final void afterCancel(Waiter waiter) {
        hook(Point.CANCEL_WON);
        Waiter popped = null;
        queueLock.lock();
        try {
            if (waiter.linked) {
                unlinkLocked(waiter);
                popped = assignLocked(0, Giving.NOTHING);
            } else {
                popped = releaseAssignedShareLocked(waiter);
            }
        } finally {
            queueLock.unlock();
        }
        waiter.unregister();
        grant(popped);
    }

    /**
     * Under the queue lock, for a popped waiter whose cancellation won: releases the share its
     * release assigned to it unless that was done already, and pops what that makes eligible.
     *
     * @return the popped waiters, chained through {@code next}, or {@code null}
     */
    private Waiter releaseAssignedShareLocked(Waiter cancelled) {
        if (!cancelled.holdsAssignedShare) {
            return null;
        }
        cancelled.holdsAssignedShare = false;
        return assignLocked(cancelled.arg, Giving.GUARDED_SHARE);
    }

    private void unlinkLocked(Waiter waiter) {
        Waiter prev = waiter.prev;
        Waiter next = waiter.next;
        if (prev == null) {
            head = next;
        } else {
            prev.next = next;
        }
        if (next == null) {
            tail = prev;
        } else {
            next.prev = prev;
        }
        waiter.prev = null;
        waiter.next = null;
        waiter.linked = false;
        length = length - 1;
    }

    /** {@return a short description of the lock for exception messages} */
    protected abstract String describe();

    // ---------------------------------------------------------------- the acquire family of every front

    /**
     * The uncontended CAS of a hold of {@code arg} that a guard will release: no waiter, no
     * allocation; fails while anyone is queued (no barging).
     */
    protected abstract boolean tryAcquireForGuard(int arg);

    /**
     * {@code acquire(token)} of every front: a ready stage if the hold is free, otherwise a place
     * in line; a token already cancelled fails the stage.
     */
    public final CompletionStage<Guard> acquireStage(int arg, CancellationToken token) {
        requireToken(token);
        if (token.isCancellationRequested()) {
            return cancelledStage();
        }
        if (tryAcquireForGuard(arg)) {
            return readyStage(arg);
        }
        return acquireAsync(arg, token);
    }

    /**
     * {@code acquireBlocking(token)} of every front: parks until granted.
     *
     * @param what names the lock and the hold in the message of an interrupt before the call
     */
    public final Guard acquireGuardBlocking(int arg, CancellationToken token, String what) throws InterruptedException {
        // the free hold of a caller neither interrupted nor cancelled, in a method small enough to
        // inline into every caller whatever the JIT compiled first: the guard is then removed
        if (token == null
                || Thread.currentThread().isInterrupted()
                || token.isCancellationRequested()
                || !tryAcquireForGuard(arg)) {
            awaitGuardBlocking(arg, token, what);
        }
        return readyGuard(arg); // one allocation site: the JIT can remove an uncontended guard
    }

    /** The rest of {@link #acquireGuardBlocking}: the bad token, the interrupt, the cancel, the wait. */
    private void awaitGuardBlocking(int arg, CancellationToken token, String what) throws InterruptedException {
        requireToken(token);
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + what);
        }
        throwIfCancelled(token);
        if (!tryAcquireForGuard(arg)) {
            awaitGrant(arg, token); // parks until granted
        }
    }

    /** {@code tryAcquire()} of every front: the guard of a free hold, or empty. */
    public final Optional<Guard> tryAcquireGuard(int arg) {
        return tryAcquireForGuard(arg) ? Optional.of(readyGuard(arg)) : Optional.empty();
    }

    /**
     * {@code acquireBlocking(timeout)} of every front: waits in line at most {@code timeout}, zero
     * meaning not at all.
     *
     * @param what names the lock and the hold in the messages of a timeout and of an interrupt
     * @throws WaitTimeoutException if the time ran out first; nothing is held
     */
    public final Guard acquireGuardWithin(int arg, Duration timeout, String what) throws InterruptedException {
        Optional<Guard> guard = tryAcquireGuard(arg, timeout, what);
        if (guard.isEmpty()) {
            throw new WaitTimeoutException(what, timeout); // on the waiting thread: its stack is the caller's
        }
        return guard.get();
    }

    /**
     * {@code tryAcquire(timeout)} of every front: waits in line at most {@code timeout}.
     *
     * @param what names the lock and the hold in the message of an interrupt before the call
     */
    public final Optional<Guard> tryAcquireGuard(int arg, Duration timeout, String what) throws InterruptedException {
        long nanos = timeoutNanos(timeout);
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before acquiring " + what);
        }
        if (tryAcquireForGuard(arg)) {
            return Optional.of(readyGuard(arg));
        }
        if (nanos == 0L) {
            return Optional.empty();
        }
        return Optional.ofNullable(acquireBlocking(arg, CancellationToken.none(), nanos));
    }

    // ---------------------------------------------------------------- helpers for the facades

    /** {@return the guard of an acquire of {@code arg} that did not wait} */
    public final Guard readyGuard(int arg) {
        return new ReadyGuard(this, arg);
    }

    /**
     * {@return the guard of {@code arg} taken at once, also its own completed stage}, or {@code
     * null} if it is not free now: {@link #acquireStage}'s first step, for a front that does more
     * before it completes an acquire
     */
    public final ReadyGuardStage tryAcquireStage(int arg) {
        return tryAcquireForGuard(arg) ? new ReadyGuard(this, arg) : null;
    }

    /** A guard that is also its own completed stage: what {@link #tryAcquireStage} returns. */
    public interface ReadyGuardStage extends Guard, CompletionStage<Guard> {}

    /** {@return the guard of an acquire of {@code arg} that did not wait, as a completed stage} */
    public final CompletionStage<Guard> readyStage(int arg) {
        return new ReadyGuard(this, arg);
    }

    /**
     * {@return a stage failed with a cancellation naming this lock}: it reads exactly like a wait
     * the token cancelled ({@code isCancelled()}, and {@code join()} throws a
     * {@link CancellationException}), which {@link CompletableFuture#failedStage} would not: its
     * {@code toCompletableFuture()} wraps the cause in a {@code CompletionException}.
     */
    public final CompletionStage<Guard> cancelledStage() {
        return CompletableFuture.failedFuture(
                new CancellationException("the token was already cancelled when acquiring " + describe()));
    }

    /** Throws the cancellation a blocking acquire on an already-cancelled token reports. */
    public final void throwIfCancelled(CancellationToken token) {
        if (token.isCancellationRequested()) {
            throw new CancellationException("the token was already cancelled when acquiring " + describe());
        }
    }

    /**
     * {@return {@code timeout} in nanoseconds, saturated at {@code Long.MAX_VALUE}}
     *
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static long timeoutNanos(Duration timeout) {
        if (timeout == null) {
            throw new NullPointerException("timeout");
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
        }
        try {
            return timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** {@return {@code token}} @throws NullPointerException naming the argument if it is null */
    public static CancellationToken requireToken(CancellationToken token) {
        if (token == null) {
            throw new NullPointerException("token");
        }
        return token;
    }
}
