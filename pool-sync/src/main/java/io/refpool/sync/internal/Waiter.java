package io.refpool.sync.internal;

import io.refpool.sync.Guard;
import io.refpool.sync.Registration;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * One contended acquire: queue node, the future handed to an async caller, and — once granted —
 * the caller's {@link Guard}, all in one object allocated only after contention was seen.
 *
 * <h2>Phase</h2>
 *
 * <pre>
 *   from       to          by
 *   WAITING    GRANTED     the releaser that popped it (tryGrant), or nobody if cancelled first
 *   WAITING    CANCELLED   a token callback, a timeout, an interrupt, the future's own
 *                          cancel/complete/completeExceptionally/obtrude/orTimeout, or the
 *                          acquirer itself when its locked recheck won (abandon)
 *   GRANTED    RELEASED    Guard.close(), exactly once
 * </pre>
 *
 * <h2>Waking a blocking waiter</h2>
 *
 * <pre>
 *   parked     to      by                          read by
 *   false      true    the waiter, after spinning,  the granter or canceller, after its CAS on
 *                      before it reads its phase    the phase: it unparks only a waiter that
 *                      and parks                    published it
 *
 *   wakeNext   to      by
 *   null       w       the granter of a batch: w, granted by the same release, is woken by this
 *                      waiter once it runs, not by the granter (one unpark per release)
 *   null/w     WOKEN   this waiter, once granted, taking the wake-up it passes on
 * </pre>
 *
 * <p>No wake-up is lost: the waiter writes {@code parked} and then reads its phase; the granter
 * writes the phase and then reads {@code parked} (all volatile), so one of them sees the other —
 * the waiter its grant, and does not park, or the granter the flag, and unparks. A chain link the
 * granter makes after the waiter already took its wake-up ({@code WOKEN}) fails, and the granter
 * wakes the next waiter itself.
 *
 * <p>The {@code WAITING} CAS decides grant versus cancel once. Whoever wins it finishes the job:
 * the granter signals the waiter; the canceller unlinks it, or hands back the share a release
 * already assigned to it ({@link WaiterQueue#afterCancel}), and settles the future. The future's
 * completion methods are overridden so that a caller can only reach the lock through that CAS:
 * completing a still-waiting future cancels the wait first (its share goes to the next waiter);
 * completing one whose grant already won settles it with the guard and reports that the caller's
 * value was not taken. Dependent stages are plain {@link CompletableFuture}s.
 */
final class Waiter extends CompletableFuture<Guard> implements Guard {
    static final int WAITING = 0;
    static final int GRANTED = 1;
    static final int CANCELLED = 2;
    static final int RELEASED = 3;

    private static final VarHandle PHASE = VarHandles.field(MethodHandles.lookup(), "phase", int.class);
    private static final VarHandle PARKED = VarHandles.field(MethodHandles.lookup(), "parked", boolean.class);
    private static final VarHandle WAKE_NEXT = VarHandles.field(MethodHandles.lookup(), "wakeNext", Waiter.class);

    /** {@code wakeNext} of a waiter that took its wake-up: a later link to it fails. */
    private static final Waiter WOKEN = new Waiter(null, 0, null);

    final WaiterQueue queue;
    final int arg;
    /** The parked thread of a blocking acquire; {@code null} for an async one. */
    private final Thread thread;

    @SuppressWarnings("unused") // accessed through PHASE
    private volatile int phase;

    @SuppressWarnings("unused") // accessed through PARKED
    private volatile boolean parked;

    @SuppressWarnings("unused") // accessed through WAKE_NEXT
    private volatile Waiter wakeNext;

    /** Set by the canceller before it settles; read after observing {@code CANCELLED}. */
    private volatile Throwable cancelCause;

    /** Written before publication, read by whoever decides the waiter (ordered by the queue lock). */
    Registration registration;

    // guarded by the queue lock while linked; once popped, owned by the granting thread
    Waiter prev;
    Waiter next;
    boolean linked;
    /**
     * Set when a release popped this waiter and counted its share in the state; cleared by whoever
     * hands that share back after a cancel won (the canceller or the releaser, first to the lock).
     */
    boolean holdsAssignedShare;

    Waiter(WaiterQueue queue, int arg, Thread thread) {
        this.queue = queue;
        this.arg = arg;
        this.thread = thread;
    }

    int phase() {
        return (int) PHASE.getAcquire(this);
    }

    Throwable cancelCause() {
        return cancelCause;
    }

    boolean tryGrant() {
        return PHASE.compareAndSet(this, WAITING, GRANTED);
    }

    /** {@return whether this call decided the waiter as cancelled}; {@code cause} may be null. */
    boolean tryCancel(Throwable cause) {
        if (PHASE.compareAndSet(this, WAITING, CANCELLED)) {
            cancelCause = cause;
            return true;
        }
        return false;
    }

    /** The acquirer won the locked recheck without publishing this waiter: retire it. */
    void abandon() {
        tryCancel(null);
        unregister();
    }

    void unregister() {
        Registration r = registration;
        if (r != null) {
            r.unregister();
        }
    }

    /** {@return whether a thread waits on this waiter (a blocking acquire) rather than a future} */
    boolean isBlocking() {
        return thread != null;
    }

    /** The blocking waiter is about to read its phase and park: from now on a granter must unpark it. */
    void publishParked() {
        PARKED.setVolatile(this, true);
    }

    /** Unparks the waiting thread if it published that it parks (see the table). */
    void wakeIfParked() {
        if (thread != null && (boolean) PARKED.getVolatile(this)) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * The granter of a batch links {@code next}, granted by the same release, to be woken by this
     * waiter when it runs.
     *
     * @return false if this waiter already took its wake-up: the caller wakes {@code next} itself
     */
    boolean linkWake(Waiter next) {
        return WAKE_NEXT.compareAndSet(this, null, next);
    }

    /** Called by a granted blocking waiter on its way out: wakes the next waiter of its batch, if any. */
    void passWake() {
        Waiter next = (Waiter) WAKE_NEXT.getAndSet(this, WOKEN);
        if (next != null && next != WOKEN) {
            next.wakeIfParked();
        }
    }

    /** Called by the trampoline: completes the future according to the decided phase. */
    void settleFuture() {
        int p = phase();
        if (p == GRANTED || p == RELEASED) {
            super.complete(this);
        } else if (p == CANCELLED) {
            Throwable cause = cancelCause;
            super.completeExceptionally(cause != null ? cause : new CancellationException());
        }
    }

    /** The token callback. */
    void cancelByToken() {
        if (tryCancel(new CancellationException("cancelled while waiting for " + queue.describe()))) {
            queue.afterCancel(this);
            if (thread != null) {
                wakeIfParked();
            } else {
                Trampoline.settle(this);
            }
        }
    }

    /**
     * The future's way in: cancels the wait if undecided. If the grant already won, settles the
     * future with this guard so the caller keeps the ownership.
     */
    private boolean cancelFromFuture() {
        if (tryCancel(null)) {
            queue.afterCancel(this);
            return true;
        }
        if (phase() != CANCELLED) {
            super.complete(this);
        }
        return false;
    }

    // ---------------------------------------------------------------- Guard

    @Override
    public void close() {
        if (PHASE.compareAndSet(this, GRANTED, RELEASED)) {
            queue.release(arg);
        }
    }

    // ---------------------------------------------------------------- the caller's future

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (cancelFromFuture()) {
            return super.cancel(mayInterruptIfRunning);
        }
        return phase() == CANCELLED && super.cancel(mayInterruptIfRunning);
    }

    @Override
    public boolean complete(Guard value) {
        if (cancelFromFuture()) {
            return super.complete(value);
        }
        return phase() == CANCELLED && super.complete(value);
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        if (ex == null) {
            throw new NullPointerException("ex");
        }
        if (cancelFromFuture()) {
            return super.completeExceptionally(ex);
        }
        return phase() == CANCELLED && super.completeExceptionally(ex);
    }

    @Override
    public CompletableFuture<Guard> completeAsync(Supplier<? extends Guard> supplier, Executor executor) {
        if (supplier == null) {
            throw new NullPointerException("supplier");
        }
        if (executor == null) {
            throw new NullPointerException("executor");
        }
        executor.execute(() -> {
            try {
                complete(supplier.get());
            } catch (Throwable t) {
                completeExceptionally(t);
            }
        });
        return this;
    }

    @Override
    public CompletableFuture<Guard> completeAsync(Supplier<? extends Guard> supplier) {
        return completeAsync(supplier, defaultExecutor());
    }

    @Override
    public void obtrudeValue(Guard value) {
        if (!cancelFromFuture() && phase() != CANCELLED) {
            throw new IllegalStateException("cannot obtrude a value on the acquire of " + queue.describe()
                    + ": the lock was already granted to this future; close its guard instead");
        }
        super.obtrudeValue(value);
    }

    @Override
    public void obtrudeException(Throwable ex) {
        if (ex == null) {
            throw new NullPointerException("ex");
        }
        if (!cancelFromFuture() && phase() != CANCELLED) {
            throw new IllegalStateException("cannot obtrude an exception on the acquire of " + queue.describe()
                    + ": the lock was already granted to this future; close its guard instead");
        }
        super.obtrudeException(ex);
    }

    @Override
    public String toString() {
        int p = phase();
        String name = p == WAITING ? "waiting" : p == GRANTED ? "granted" : p == CANCELLED ? "cancelled" : "released";
        return "Waiter[" + name + " for " + queue.describe() + "]";
    }
}
