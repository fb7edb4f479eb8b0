package io.refpool.sync;

import io.refpool.sync.internal.SharedSync;
import io.refpool.sync.internal.VarHandles;
import io.refpool.sync.internal.WaiterQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A reader-writer lock whose untimed shared try, {@link #tryLockShared()}, writes no memory that
 * another core's shared try writes, so readers on many cores scale; writers pay for it.
 *
 * <pre>{@code
 * ReaderBiasedSharedMutex gate = new ReaderBiasedSharedMutex();
 *
 * if (gate.tryLockShared()) {                            // the hot path: no shared write
 *     try {
 *         serve(request);
 *     } finally {
 *         gate.unlockShared();                           // may be called on another thread
 *     }
 * }
 *
 * try (Guard world = gate.acquireBlocking()) {           // waits for every reader to leave
 *     reconfigure();
 * }
 * }</pre>
 *
 * <p><b>When to use it.</b> Where shared holds vastly outnumber exclusive ones, as a pool's attach
 * gate does with {@code pool.exclusive()}; otherwise use {@link AsyncSharedMutex}, which this
 * class is built on: its FIFO queue, waiting, cancellation and exclusive side are used as they are.
 *
 * <h2>Implementation notes</h2>
 *
 * <p><b>Reader indicator.</b> A shared hold taken with {@link #tryLockShared()} is not counted in
 * the underlying lock's state word but in a table of padded, signed counters (<em>stripes</em>),
 * one picked by hashing the calling thread's id: entering adds one to the caller's stripe, leaving
 * subtracts one from the leaver's stripe. This is the reader side of BRAVO (Dice and Kogan, USENIX
 * ATC 2019) and of folly's deferred readers, with one change: a hold may be left on a thread other
 * than the one that took it (a pool hands an attach held for an async call to an executor thread),
 * so a stripe is a count, not an owner slot, and may go negative; only the sum over all stripes
 * means anything. Two threads that hash to one stripe share its cache line, which costs contention
 * there, never correctness.
 *
 * <p><b>Bias.</b> A writer keeps readers out with the writer-held and queued bits of the underlying
 * lock's state word: a reader that finds them set after announcing itself backs out and waits in
 * the lock's FIFO queue as an ordinary reader ({@link #acquireShared}, {@link #acquireSharedBlocking}),
 * behind the writer, so readers cannot starve a writer. On top of that, as in BRAVO, a flag routes
 * shared tries: a writer turns it off when it starts a revocation and, once the stripes drained,
 * keeps it off for {@value #INHIBIT_FACTOR} times as long as the revocation took; meanwhile
 * {@link #tryLockShared()} fails at once and readers take the underlying lock's word with
 * {@link #tryLockSharedUnbiased()}, so a workload heavy in exclusive holds runs on the underlying
 * lock and its writers scan empty stripes. The first reader after the window turns the bias back
 * on. The flag is a hint: a reader that read it on just before a writer turned it off still runs
 * the handshake below, so no safety argument uses it. {@link #setBiasPolicy} forces it.
 *
 * <p><b>The handshake (Dekker).</b>
 *
 * <pre>
 *   reader  tryLockShared   stripe += 1 (volatile RMW)   then  read writer bits (volatile)
 *   writer  exclusive       take the lock (CAS)           then  read every stripe (volatile)
 *   reader  leaving         stripe -= 1 (volatile RMW)   then  read the draining writer (volatile)
 *   writer  draining        publish itself (volatile)     then  read every stripe again
 * </pre>
 *
 * <p>Volatile accesses are totally ordered. If the writer's scan misses a reader's increment, the
 * reader's later read of the writer bits follows the writer's CAS and sees them: the reader backs
 * out and never holds. A scan's sum is at least the number of holds in progress: a hold's increment
 * can only be missed by the case just named, and a hold left on another stripe had its increment
 * happen-before its decrement, so a scan that sees the decrement but missed the increment would be
 * that same case. A reader backing out decrements the stripe it incremented, so its brief count
 * cannot make a sum read too low either. Hence a sum of zero, read while the writer holds the
 * lock, means no reader holds, and none will until the writer leaves. Likewise for the last two
 * lines: a draining writer's rescan sees the last leaver's decrement, or the leaver sees the
 * writer and completes it; both may try, and one CAS on the wait's phase decides.
 *
 * <p><b>Exclusive acquire.</b> Take the underlying lock's exclusive side (any form: it queues FIFO
 * and turns the bias off), then wait for the stripes to drain. A drain never parks a thread the
 * lock does not own: a writer that finds readers publishes a {@code Drain} and the last reader to
 * leave completes it, on the reader's thread, so an async writer's stage completes there and a
 * blocking writer, parked on its own thread, is woken. The drain's phase moves
 *
 * <pre>
 *   phase      to         by
 *   LOCKING    DRAINING   the underlying lock granted the writer
 *   LOCKING    CANCELLED  the caller settled the returned stage first; the lock wait is cancelled
 *   DRAINING   GRANTED    the stripes read zero (writer's rescan, or the last reader leaving)
 *   DRAINING   CANCELLED  the token, an interrupt, or the caller settling the returned stage:
 *                         the exclusive hold is released at once, so readers queued behind the
 *                         writer are admitted and none is stranded
 * </pre>
 *
 * <p><b>Cost.</b> {@code tryLockShared()} is one atomic add on the caller's stripe and one volatile
 * read of a word that only writers and waiters change; {@code unlockShared()} is one atomic add and
 * one volatile read of a field only writers change. Neither allocates. An exclusive acquire adds a
 * scan of the stripes (a few per core) to the underlying lock's cost, and a {@code Drain} only if
 * readers were found.
 *
 * <p><b>Leaks.</b> A shared hold never released (its thread died holding it) keeps every writer
 * out, exactly as a leaked read lock of {@link AsyncSharedMutex} does; readers are unaffected. A
 * waiting writer's token or interrupt still ends its wait cleanly, and because a hold is a count,
 * not an owner, any thread that knows of the leak can give it back with {@link #unlockShared()}.
 * Nothing is keyed by a live thread object, so a dead or unmounted thread keeps nothing reachable.
 */
public final class ReaderBiasedSharedMutex {
    private static final VarHandle STRIPES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle DRAIN = VarHandles.field(MethodHandles.lookup(), "drain", Drain.class);

    /** Longs between two stripes: 128 bytes, so adjacent-line prefetch does not couple them either. */
    private static final int STRIDE = 16;

    /** Stripes per available processor: few collisions between the threads of a busy process. */
    private static final int STRIPES_PER_CPU = 4;

    private static final int MAX_STRIPES = 1 << 10;

    private final SharedSync sync = new SharedSync(SharedSync.MAX_READERS, "ReaderBiasedSharedMutex");

    /** Stripe {@code i} is at {@code (i + 1) * STRIDE}: none shares a line with the array header. */
    private final long[] stripes;

    /** {@code 64 - log2(stripe count)}: a Fibonacci hash of the thread id keeps its top bits. */
    private final int shift;

    /** BRAVO's N: after a revocation the bias stays off this many times as long as it took. */
    private static final long INHIBIT_FACTOR = 9;

    /** {@link #setBiasPolicy}: the bias follows revocations (the default). */
    private static final int ADAPTIVE = 0;

    /**
     * Where shared tries go, a hint only: {@code true}, the stripes; {@code false}, the underlying
     * lock's word, until {@link #inhibitUntil}. Safety never rests on it (a stripe hold taken while
     * it is off is still seen by a writer's scan); it keeps writers from paying a revocation per
     * exclusive hold when exclusive holds are frequent. Written by writers and, once the window
     * has passed, by the first reader to look.
     */
    private volatile boolean biased = true;

    /** {@link System#nanoTime()} before which the bias stays off after the last revocation. */
    private volatile long inhibitUntil;

    /** {@link #ADAPTIVE}, or {@code 1}/{@code -1}: the bias forced on or off. */
    private volatile int policy = ADAPTIVE;

    /** The writer waiting for readers to leave, or {@code null}; at most one, the exclusive holder. */
    @SuppressWarnings("unused") // accessed through DRAIN
    private volatile Drain drain;

    /** Test seam: the clock of the inhibit window, read only by writers and by unbiased readers. */
    LongSupplier clock = System::nanoTime;

    /** Test seam: named points of the protocol. Plain: set before the threads under test start. */
    Consumer<Point> hooks;

    /** The points {@link #hooks} is called at. */
    enum Point {
        /** A reader added itself to its stripe and has not yet looked for a writer. */
        READER_ANNOUNCED,
        /** A writer holding the lock found readers and has not yet published its drain. */
        DRAIN_PUBLISHING,
        /** A writer published its drain and has not yet read the stripes again. */
        DRAIN_PUBLISHED,
        /** A cancel of a writer's wait (its token, or its stage settled) read the wait's phase and has not yet ended it. */
        DRAIN_CANCELLING
    }

    /** Creates an unlocked mutex with stripes for the processors available now. */
    public ReaderBiasedSharedMutex() {
        int wanted = Math.max(2, Runtime.getRuntime().availableProcessors()) * STRIPES_PER_CPU;
        int count = Math.min(MAX_STRIPES, Integer.highestOneBit(wanted - 1) << 1);
        this.stripes = new long[(count + 2) * STRIDE];
        this.shift = 64 - Integer.numberOfTrailingZeros(count);
    }

    // ---------------------------------------------------------------- shared

    /**
     * Takes the lock shared unless a writer holds or waits or the bias is off; the allocation-free
     * pair of {@link #unlockShared()}. Writes only the calling thread's stripe. While the bias is
     * off (after a revocation, see the class notes) it fails at once: take
     * {@link #tryLockSharedUnbiased()} or wait in line instead.
     *
     * @return whether it was taken
     */
    public boolean tryLockShared() {
        if (!biased && !rebias()) {
            return false;
        }
        int stripe = stripeOfCurrentThread();
        STRIPES.getAndAdd(stripes, stripe, 1L);
        Consumer<Point> h = hooks;
        if (h != null) {
            h.accept(Point.READER_ANNOUNCED);
        }
        if (!sync.writerHoldsOrWaits()) {
            return true;
        }
        STRIPES.getAndAdd(stripes, stripe, -1L); // backs out: the same stripe, so no scan reads it low
        completeDrainIfLast();
        return false;
    }

    /**
     * Takes the lock shared through the underlying lock's word, as
     * {@link AsyncSharedMutex#tryLockShared()} does, while the bias is off; the fallback of a
     * {@link #tryLockShared()} that failed, with {@link #unlockSharedUnbiased()} as its pair.
     *
     * <pre>{@code
     * ReaderBiasedSharedMutex gate = new ReaderBiasedSharedMutex();
     * if (gate.tryLockShared()) {
     *     try { serve(request); } finally { gate.unlockShared(); }
     * } else if (gate.tryLockSharedUnbiased()) {
     *     try { serve(request); } finally { gate.unlockSharedUnbiased(); }
     * }
     * }</pre>
     *
     * <p>Nothing is allocated. Like every raw pair it carries no owner: give each hold back exactly
     * once, on any thread.
     *
     * @return whether it was taken: {@code false} if the bias is on, a writer holds or waits, or
     *     the reader count is at its maximum
     */
    public boolean tryLockSharedUnbiased() {
        return !biased && sync.tryLockShared();
    }

    /**
     * Gives back a shared hold taken with {@link #tryLockSharedUnbiased()}, on any thread.
     *
     * @throws IllegalStateException if no reader holds the lock's word, changing nothing; an extra
     *     call while other such readers hold takes one of their places, as for {@link
     *     AsyncSharedMutex#unlockShared()}
     */
    public void unlockSharedUnbiased() {
        sync.unlockShared();
    }

    /**
     * Forces the bias on or off, or gives it back to revocations; for tests and for measuring.
     *
     * <pre>{@code
     * ReaderBiasedSharedMutex gate = new ReaderBiasedSharedMutex();
     * gate.setBiasPolicy(Boolean.FALSE); // every shared try goes through the underlying lock's word
     * gate.setBiasPolicy(null);          // the default: off for a while after each revocation
     * }</pre>
     *
     * <p>Holds already taken either way stay valid: the policy only routes later shared tries.
     *
     * @param forced {@code TRUE} keeps the bias on however often writers revoke it, {@code FALSE}
     *     keeps it off, {@code null} restores the default
     */
    public void setBiasPolicy(Boolean forced) {
        policy = forced == null ? ADAPTIVE : forced ? 1 : -1;
        inhibitUntil = clock.getAsLong();
        biased = forced == null || forced;
    }

    /** {@return whether shared tries currently go through the stripes (diagnostics: may be stale)} */
    public boolean isBiased() {
        return biased;
    }

    /**
     * Gives back a shared hold taken with {@link #tryLockShared()}, on any thread.
     *
     * <p>Call it exactly once per successful {@code tryLockShared()}: holds are one count, spread
     * over stripes that only a writer's scan sums (a hold may be given back on another thread, so a
     * stripe may read below zero), and an extra call cannot be detected. It gives back another
     * reader's place, so a queued writer may be let in while that reader still reads. With no
     * reader holding, it leaves the sum below zero: a writer that starts its wait then waits until
     * its token ends it (readers back out while it waits, so nothing brings the sum back to zero),
     * and one that starts while a later reader holds is let in while that reader still reads.
     */
    public void unlockShared() {
        STRIPES.getAndAdd(stripes, stripeOfCurrentThread(), -1L);
        completeDrainIfLast();
    }

    /**
     * Acquires the lock shared through the underlying lock's queue, as
     * {@link AsyncSharedMutex#acquireShared(CancellationToken)}: FIFO behind any writer.
     *
     * @param token cancels the wait; if already cancelled, the returned stage has already failed
     * @return a stage completed with the guard, or failed with a {@link CancellationException}
     * @throws NullPointerException if {@code token} is null
     */
    public CompletionStage<Guard> acquireShared(CancellationToken token) {
        return sync.acquireStage(SharedSync.READ, token);
    }

    /**
     * Acquires the lock shared through the underlying lock's queue, parking until granted, as
     * {@link AsyncSharedMutex#acquireSharedBlocking(CancellationToken)}.
     *
     * @param token cancels the wait
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws CancellationException if the token is cancelled before the grant
     * @throws NullPointerException if {@code token} is null
     */
    public Guard acquireSharedBlocking(CancellationToken token) throws InterruptedException {
        return sync.acquireGuardBlocking(SharedSync.READ, token, "ReaderBiasedSharedMutex shared");
    }

    // ---------------------------------------------------------------- exclusive

    /**
     * Takes the lock exclusively if it is free, nobody is queued and no reader holds; the pair of
     * {@link #unlock()}. It may also fail while a reader is arriving that then backs out: a try
     * that meets a reader in the middle of its handshake cannot tell it from a holder.
     *
     * @return whether it was taken
     */
    public boolean tryLock() {
        if (!sync.tryLock()) {
            return false;
        }
        long started = revoking();
        if (readersDrained()) {
            revoked(started);
            return true;
        }
        sync.unlock(); // readers that backed out meanwhile wait in the queue: this unlock serves them
        return false;
    }

    /**
     * Releases an exclusive hold taken with {@link #tryLock()}.
     *
     * @throws IllegalStateException if no writer holds the lock, or it holds through a guard
     */
    public void unlock() {
        sync.unlock();
    }

    /** {@return as {@link #acquire(CancellationToken)} with a token that never cancels} */
    public CompletionStage<Guard> acquire() {
        return acquire(CancellationToken.none());
    }

    /**
     * Acquires the lock exclusively without parking a thread: in line for the underlying lock,
     * then until every reader has left. The stage may complete on the thread of the last reader,
     * inside its {@code unlockShared()}, and its continuations run there in place, not through the
     * trampoline that flattens the underlying lock's grants: a chain whose continuations leave as
     * readers and wait again as writers grows that thread's stack once per link.
     *
     * @param token cancels the wait, in either part; if already cancelled, the returned stage has
     *     already failed
     * @return a stage completed with the guard, or failed with a {@link CancellationException};
     *     cancelling or completing it while it waits ends the wait and owns nothing
     * @throws NullPointerException if {@code token} is null
     */
    public CompletionStage<Guard> acquire(CancellationToken token) {
        WaiterQueue.requireToken(token);
        if (token.isCancellationRequested()) {
            return sync.cancelledStage();
        }
        WaiterQueue.ReadyGuardStage now = sync.tryAcquireStage(SharedSync.WRITE);
        if (now != null) { // the lock was free: a drain only if readers are found
            Drain wait = drainIfRead(now, token);
            return wait == null ? now : wait.result;
        }
        Drain wait = new Drain(token);
        CompletionStage<Guard> locking = sync.acquireStage(SharedSync.WRITE, token);
        wait.locking = locking;
        locking.whenComplete(wait::locked);
        return wait.result;
    }

    /**
     * Acquires the lock exclusively, as {@link #acquireBlocking(CancellationToken)} with a token that
     * never cancels.
     *
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     */
    public Guard acquireBlocking() throws InterruptedException {
        return acquireBlocking(CancellationToken.none());
    }

    /**
     * Acquires the lock exclusively, parking the calling thread until it holds it and every reader
     * has left.
     *
     * @param token cancels the wait
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws CancellationException if the token is cancelled before the grant
     * @throws NullPointerException if {@code token} is null
     */
    public Guard acquireBlocking(CancellationToken token) throws InterruptedException {
        Drain wait;
        for (; ; ) { // a busy lock's wait runs this thread's deferred settles before it parks
            Guard exclusive = sync.acquireGuardBlocking(SharedSync.WRITE, token, "ReaderBiasedSharedMutex");
            wait = drainIfRead(exclusive, token);
            if (wait == null) {
                return exclusive;
            }
            if (!WaiterQueue.hasDeferredSettles()) {
                break;
            }
            // about to park for the readers with settles deferred: they must run first, but not
            // under this hold, for a waiter they grant may block on this lock, on this thread
            // ends the drain, giving the lock back; false only if the readers left meanwhile (the
            // grant is returned); a drain the token ended already reports true, and the next
            // round throws the token's cancellation, owning nothing
            if (!wait.result.cancel(false)) {
                return wait.result.join();
            }
            WaiterQueue.runDeferredSettlesBeforeParking();
        }
        try {
            return wait.result.get();
        } catch (InterruptedException e) {
            if (wait.result.cancel(false)) { // the drain ends, releasing the lock
                throw new InterruptedException("interrupted while waiting for the readers of " + this + " to leave");
            }
            Thread.currentThread().interrupt(); // the grant won: keep the interrupt for the caller
            return wait.result.join();
        } catch (CancellationException e) { // the token ended the drain; from JDK 23 get() wraps its exception
            throw e.getCause() instanceof CancellationException named ? named : e;
        } catch (ExecutionException e) { // never: the drain fails only with a CancellationException
            throw new CompletionException(e.getCause());
        }
    }

    /**
     * Revokes the bias for a writer that holds the underlying lock through {@code held}.
     *
     * @return {@code null} if no reader holds (the writer has the lock alone), otherwise the drain
     *     of the readers under way, which {@code token} cancels
     */
    private Drain drainIfRead(Guard held, CancellationToken token) {
        long started = revoking();
        if (readersDrained()) {
            revoked(started);
            return null;
        }
        Drain wait = new Drain(token);
        wait.started = started;
        wait.locked(held, null);
        return wait;
    }

    // ---------------------------------------------------------------- diagnostics

    /** {@return whether a writer holds the lock, perhaps still waiting for readers (may be stale)} */
    public boolean isWriteLocked() {
        return sync.isWriteLocked();
    }

    /** {@return shared holds of both kinds (diagnostics: may be stale at once)} */
    public long readers() {
        return sumOfStripes() + sync.readers();
    }

    /** {@return the number of readers and writers queued (diagnostics: may be stale at once)} */
    public int queueLength() {
        return sync.queueLength();
    }

    @Override
    public String toString() {
        return "ReaderBiasedSharedMutex[readers=" + readers() + ", writeLocked=" + isWriteLocked() + ", queued="
                + queueLength() + "]";
    }

    // ---------------------------------------------------------------- the protocol

    /**
     * A writer holding the underlying lock starts a revocation: the bias goes off at once (a hint;
     * the writer bits keep readers out), and the clock is read only if it was on.
     *
     * @return when it started, or {@code 0} if the bias was already off (nothing to time)
     */
    private long revoking() {
        if (!biased || policy > 0) {
            return 0;
        }
        biased = false;
        long now = clock.getAsLong();
        // until the revocation ends and sets the window, one that ends now: a revocation that
        // never ends (cancelled, or a failed tryLock) keeps the bias off no longer than that,
        // whatever the clock's origin (nanoTime may be negative: the initial 0 is not in the past)
        inhibitUntil = now;
        return now == 0 ? 1 : now;
    }

    /** The stripes drained: the bias stays off {@link #INHIBIT_FACTOR} times what the revocation took. */
    private void revoked(long started) {
        if (started == 0) {
            return;
        }
        long now = clock.getAsLong();
        inhibitUntil = now + INHIBIT_FACTOR * Math.max(0, now - started);
        biased = false; // again: a reader may have turned it back on under an older window
    }

    /** The bias is off: turns it back on if the window since the last revocation has passed. */
    private boolean rebias() {
        int p = policy;
        if (p != ADAPTIVE) {
            return p > 0;
        }
        if (clock.getAsLong() - inhibitUntil < 0) {
            return false;
        }
        biased = true;
        return true;
    }

    private int stripeOfCurrentThread() {
        @SuppressWarnings("deprecation") // threadId() is JDK 19+; getId() is the same number
        long id = Thread.currentThread().getId();
        return ((int) ((id * 0x9E37_79B9_7F4A_7C15L) >>> shift) + 1) * STRIDE;
    }

    private long sumOfStripes() {
        long sum = 0;
        for (int i = STRIDE; i < stripes.length - STRIDE; i += STRIDE) {
            sum += (long) STRIPES.getVolatile(stripes, i);
        }
        return sum;
    }

    /** {@return whether no reader holds through the stripes}; meaningful while a writer holds the lock */
    private boolean readersDrained() {
        return sumOfStripes() == 0;
    }

    /** A reader left or backed out: if a writer waits for the stripes and they are empty, grant it. */
    private void completeDrainIfLast() {
        Drain waiting = (Drain) DRAIN.getVolatile(this);
        if (waiting != null && readersDrained()) {
            waiting.finish();
        }
    }

    private void hook(Point point) {
        Consumer<Point> h = hooks;
        if (h != null) {
            h.accept(point);
        }
    }

    /** One exclusive acquire past the underlying lock's fast path: its phases are in the class notes. */
    private final class Drain implements Runnable {
        private static final int LOCKING = 0;
        private static final int DRAINING = 1;
        private static final int GRANTED = 2;
        private static final int CANCELLED = 3;

        private static final VarHandle PHASE = VarHandles.field(MethodHandles.lookup(), "phase", int.class);

        /** The caller's stage: {@code obtrude...} first ends a wait still open, and is refused once granted. */
        final CompletableFuture<Guard> result = new CompletableFuture<>() {
            @Override
            public void obtrudeValue(Guard value) {
                refuseObtrudeIfGranted();
                super.obtrudeValue(value);
            }

            @Override
            public void obtrudeException(Throwable ex) {
                Objects.requireNonNull(ex, "ex");
                refuseObtrudeIfGranted();
                super.obtrudeException(ex);
            }
        };

        private final CancellationToken token;
        /** The underlying lock's wait, cancelled if the caller gives up first ({@code null}: blocking). */
        CompletionStage<Guard> locking;
        /** The underlying lock's exclusive hold, set before {@code DRAINING}. */
        private Guard exclusive;

        /** When the revocation started ({@link #revoking()}), set before {@code DRAINING}. */
        long started;

        private volatile Registration registration;

        @SuppressWarnings("unused") // accessed through PHASE
        private volatile int phase = LOCKING;

        Drain(CancellationToken token) {
            this.token = token;
            result.whenComplete((guard, failure) -> abandon());
        }

        /** The underlying lock's wait settled: drain the readers, or pass its failure on. */
        void locked(Guard held, Throwable failure) {
            if (failure != null) {
                if (PHASE.compareAndSet(this, LOCKING, CANCELLED)) {
                    result.completeExceptionally(failure instanceof CompletionException ? failure.getCause() : failure);
                }
                return;
            }
            exclusive = held;
            if (locking != null) { // async: granted now; the blocking form timed it already
                started = revoking();
            }
            if (!PHASE.compareAndSet(this, LOCKING, DRAINING)) {
                held.close(); // the caller gave up while the grant was on its way
                return;
            }
            if (readersDrained()) {
                finish();
                return;
            }
            hook(Point.DRAIN_PUBLISHING);
            if (!publish()) {
                return; // cancelled since it took the lock: the cancel gave the lock back
            }
            if (token.canBeCancelled()) {
                Registration r = token.register(this);
                registration = r;
                if ((int) PHASE.getVolatile(this) != DRAINING) {
                    r.unregister(); // settled before the registration was stored
                }
            }
            hook(Point.DRAIN_PUBLISHED);
            if (readersDrained()) {
                finish();
            }
        }

        /**
         * Publishes this drain for the readers to complete, unless it was cancelled first. A cancel between taking the lock and publishing
         * gives the lock back, and a later writer may have published its drain since: this one must
         * not take its place, for the last reader would then find a drain it cannot complete. A
         * cancelled drain published anyway takes itself out again, and a writer that finds one out
         * takes it out before publishing its own.
         *
         * @return whether it was published
         */
        private boolean publish() {
            ReaderBiasedSharedMutex mutex = ReaderBiasedSharedMutex.this;
            for (; ; ) {
                if ((int) PHASE.getVolatile(this) != DRAINING) {
                    return false;
                }
                if (DRAIN.compareAndSet(mutex, null, this)) {
                    if ((int) PHASE.getVolatile(this) != DRAINING) {
                        DRAIN.compareAndSet(mutex, this, null);
                        return false;
                    }
                    return true;
                }
                Drain present = (Drain) DRAIN.getVolatile(mutex);
                if (present != null && (int) PHASE.getVolatile(present) != DRAINING) {
                    DRAIN.compareAndSet(mutex, present, null); // a cancelled writer's, published late
                } else {
                    Thread.onSpinWait(); // the cancelled one's own take-back is on its way
                }
            }
        }

        /** The stripes read zero: the writer holds the lock alone. */
        void finish() {
            if (!PHASE.compareAndSet(this, DRAINING, GRANTED)) {
                return;
            }
            retire();
            revoked(started);
            if (!result.complete(exclusive)) {
                exclusive.close(); // the caller settled the stage itself: nobody else will close it
            }
        }

        /** The token's callback: ends the wait, in whichever part it is. */
        @Override
        public void run() {
            cancel(true);
        }

        /** The returned stage was settled, by this wait or by the caller: a wait still open ends. */
        private void abandon() {
            cancel(false);
        }

        private void refuseObtrudeIfGranted() {
            abandon(); // a wait still open ends first, giving back what it holds
            if ((int) PHASE.getVolatile(this) == GRANTED) {
                throw new IllegalStateException("cannot obtrude on the exclusive acquire of "
                        + ReaderBiasedSharedMutex.this + ": the lock was already granted to this future; close its"
                        + " guard instead");
            }
        }

        /**
         * Ends the wait in whichever part it is, reading the phase again if it moved on meanwhile (a
         * grant moves {@code LOCKING} to {@code DRAINING} at any time); the failure is made only by
         * the call that ends it, so a settled or granted stage costs no exception.
         */
        private void cancel(boolean byToken) {
            for (; ; ) {
                int phase = (int) PHASE.getVolatile(this);
                if (phase == LOCKING || phase == DRAINING) {
                    hook(Point.DRAIN_CANCELLING);
                }
                if (phase == DRAINING) {
                    if (PHASE.compareAndSet(this, DRAINING, CANCELLED)) {
                        retire();
                        exclusive.close(); // the lock's queue serves whoever waits behind this writer
                        result.completeExceptionally(cancellation(byToken));
                        return;
                    }
                } else if (phase == LOCKING) {
                    if (PHASE.compareAndSet(this, LOCKING, CANCELLED)) {
                        result.completeExceptionally(cancellation(byToken));
                        if (locking != null) {
                            locking.toCompletableFuture().cancel(false); // a grant that won is closed by locked()
                        }
                        return;
                    }
                } else {
                    return; // granted or cancelled already
                }
            }
        }

        private CancellationException cancellation(boolean byToken) {
            return new CancellationException(
                    byToken
                            ? "cancelled while waiting for the readers of " + ReaderBiasedSharedMutex.this + " to leave"
                            : "the caller settled the exclusive acquire's stage");
        }

        private void retire() {
            DRAIN.compareAndSet(ReaderBiasedSharedMutex.this, this, null);
            Registration r = registration;
            if (r != null) {
                r.unregister();
            }
        }
    }
}
