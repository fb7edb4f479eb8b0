package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.PoolClosedException;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * How a thread passes the pool's {@link Gate}: at once when it is free, otherwise by waiting in its
 * FIFO line, blocking or not. Each wait ends as every wait of the pool does ({@link Waits}): at the
 * caller's limit or the pool's {@code defaultWait}, on the caller's token, on an interrupt, or with
 * {@link PoolClosedException} when the pool closes; a drainer's and close's own waits ({@code
 * internal}) end only when granted. A blocking wait is recorded as a JFR attach-wait event. Which
 * thread is attached, and how deep, is {@link Attacher}'s.
 *
 * <pre>
 *   a pass        how                                       by
 *   at once       the gate's tryEnter (the biased read side, or the free mutex); left raw
 *                 the unbiased read side                   {@link #enter}, {@link #enterWithin}
 *   blocking      a parked wait; the guard leaves once     {@link #enter}, {@link #enterWithin}
 *   async         a stage of the guard, no thread parked   {@link #waitAsync}, {@link #holdGate}
 * </pre>
 */
final class GateWaits {
    private final PoolState pool;
    /** Cancelled when the pool closes: ends every wait for the gate but internal ones. */
    private final CancellationToken closing;

    private final Gate gate;
    private final AttachMode mode;
    /** The limit of a caller's wait for the gate given none, or {@code null}. */
    private final Duration defaultWait;

    /** Run when a timed wait for the gate ends at its limit: reports threads that ended attached. */
    private final Runnable timedOut;

    GateWaits(
            PoolState pool,
            CancellationToken closing,
            Gate gate,
            AttachMode mode,
            Duration defaultWait,
            Runnable timedOut) {
        this.pool = pool;
        this.closing = closing;
        this.gate = gate;
        this.mode = mode;
        this.defaultWait = defaultWait;
        this.timedOut = timedOut;
    }

    /** {@return whether the gate was entered at once}; left raw with {@code leave(null, exclusive)} */
    boolean tryEnter(boolean exclusive) {
        return gate.tryEnter(exclusive);
    }

    /** A pool-internal wait that never parks and is never cancelled (a drain). */
    CompletionStage<Guard> enterAsync(boolean exclusive) {
        return gate.enterAsync(exclusive, CancellationToken.none());
    }

    /** Forces the gate's reader bias on or off, or ({@code null}) gives it back to revocations. */
    void setBiasPolicy(Boolean forced) {
        gate.setBiasPolicy(forced);
    }

    int queueLength() {
        return gate.queueLength();
    }

    /** {@return the guard of a wait for the gate, or {@code null} if it was entered at once} */
    Guard enter(CancellationToken token, boolean exclusive, boolean internal) {
        if (gate.tryEnter(exclusive)) {
            return null;
        }
        Guard unbiased = gate.tryEnterUnbiased(exclusive);
        if (unbiased != null) {
            return unbiased;
        }
        return defaultWait != null && !internal && !token.canBeCancelled()
                ? waitWithin(defaultWait, exclusive)
                : waitAtGate(token, exclusive, internal);
    }

    /**
     * Enters shared (every hold in {@code GLOBAL} mode) on a pool whose close has finished, as a
     * drain does but interruptibly: {@code flush()} after close. The default wait does not bound it,
     * and the close, which ended every other wait, does not end it.
     */
    Guard enterAfterClose() throws InterruptedException {
        if (gate.tryEnter(false)) {
            return null;
        }
        Guard unbiased = gate.tryEnterUnbiased(false);
        return unbiased != null ? unbiased : gate.enterBlocking(false, CancellationToken.none());
    }

    /** {@link #enter} waiting at most {@code timeout}: the timer armed only if it waits, not at all for zero. */
    Guard enterWithin(Duration timeout, boolean exclusive) {
        if (gate.tryEnter(exclusive)) {
            return null;
        }
        Guard unbiased = gate.tryEnterUnbiased(exclusive);
        return unbiased != null ? unbiased : waitWithin(timeout, exclusive);
    }

    /** The gate was not free: waits in line at most {@code timeout} (zero: not at all). */
    private Guard waitWithin(Duration timeout, boolean exclusive) {
        if (timeout.isZero()) {
            timedOut.run(); // the gate may be held by a thread that will never give it back
            pool.timedOut();
            throw new WaitTimeoutException(gateName(exclusive), timeout);
        }
        CancellationSource timer = Waits.timer(timeout);
        try {
            return waitAtGate(timer.token(), exclusive, false);
        } catch (CancellationException e) {
            RuntimeException ended = Waits.ended(e, timer, gateName(exclusive), timeout);
            if (ended instanceof WaitTimeoutException) {
                timedOut.run(); // the gate may be held by a thread that will never give it back
            }
            throw Waits.counted(ended, pool);
        } finally {
            timer.close();
        }
    }

    /** {@return what a wait at the gate waits for, in messages} */
    private String gateName(boolean exclusive) {
        return (exclusive && mode != AttachMode.GLOBAL ? "exclusive use of pool '" : "the attach gate of pool '")
                + pool.name() + "'";
    }

    /** The gate was not free: waits in line, recorded as an attach-wait event. */
    private Guard waitAtGate(CancellationToken token, boolean exclusive, boolean internal) {
        PoolEvents.AttachWait event = new PoolEvents.AttachWait();
        event.begin();
        boolean interrupted = false;
        try {
            if (!internal) {
                return waitForGate(exclusive, token);
            }
            for (; ; ) {
                try {
                    return gate.enterBlocking(exclusive, CancellationToken.none());
                } catch (InterruptedException e) {
                    interrupted = true; // a drainer and close() finish their attach
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            event.pool = pool.name();
            event.exclusive = exclusive;
            event.commit();
        }
    }

    private Guard waitForGate(boolean exclusive, CancellationToken token) {
        CancellationSource linked = null;
        CancellationToken waitToken = closing;
        if (token.canBeCancelled()) {
            linked = CancellationSource.linkedTo(token, closing);
            waitToken = linked.token();
        }
        try {
            return gate.enterBlocking(exclusive, waitToken);
        } catch (InterruptedException e) {
            throw Waits.interrupted(gateName(exclusive), e);
        } catch (CancellationException e) {
            if (pool.isClosed()) {
                throw new PoolClosedException("pool '" + pool.name() + "' closed while this thread waited to attach");
            }
            throw (CancellationException) Waits.named(e, gateName(exclusive));
        } finally {
            if (linked != null) {
                linked.close();
            }
        }
    }

    /** Leaves the gate: through {@code guard} if the wait gave one, otherwise raw. */
    void leave(Guard guard, boolean exclusive) {
        if (guard != null) {
            guard.close();
        } else {
            gate.leave(exclusive);
        }
    }

    /**
     * Holds the gate for an async caller without attaching a thread: the stage completes with a
     * guard that leaves the gate once, which {@code Attacher.runAttached} adopts on whichever thread later
     * runs the caller's work. Meanwhile the hold counts as an attached thread.
     */
    CompletionStage<Guard> holdGate(CancellationToken token, boolean exclusive) {
        CompletionStage<Guard> refused = refuseAsync(token);
        if (refused != null) {
            return refused;
        }
        if (gate.tryEnter(exclusive)) {
            if (pool.isClosed()) {
                gate.leave(exclusive);
                return CompletableFuture.failedFuture(new PoolClosedException(pool.onClosedPool("attachAsync()")));
            }
            return CompletableFuture.completedStage(new Entered(exclusive));
        }
        return waitAsync(token, exclusive);
    }

    /** {@return a failed stage if the pool is closed or the token cancelled, else {@code null}} */
    <T> CompletionStage<T> refuseAsync(CancellationToken token) {
        if (pool.isClosed()) {
            return CompletableFuture.failedFuture(new PoolClosedException(pool.onClosedPool("attachAsync()")));
        }
        if (token.isCancellationRequested()) {
            return CompletableFuture.failedFuture(
                    new CancellationException("attachAsync() with a token that was already cancelled"));
        }
        pool.hook(PoolHooks.Point.ATTACH_ASYNC_CHECKED);
        return null;
    }

    /** Waits for the gate without parking; the stage fails as a blocking wait would throw. */
    CompletionStage<Guard> waitAsync(CancellationToken token, boolean exclusive) {
        CancellationSource linked = CancellationSource.linkedTo(token, closing);
        return gate.enterAsync(exclusive, linked.token()).handle((guard, failure) -> {
            linked.close();
            if (failure != null) {
                if (pool.isClosed()) {
                    throw new CompletionException(
                            new PoolClosedException("pool '" + pool.name() + "' closed while waiting to attach"));
                }
                throw new CompletionException(Waits.named(Waits.unwrapped(failure), gateName(exclusive)));
            }
            if (pool.isClosed()) { // granted just before the close failed the waiters
                guard.close();
                throw new CompletionException(
                        new PoolClosedException("pool '" + pool.name() + "' closed while waiting to attach"));
            }
            return guard;
        });
    }

    /** The gate entered at once by {@link #holdGate}: left once, by its close. */
    private final class Entered implements Guard {
        private static final VarHandle LEFT =
                FieldHandles.find(MethodHandles.lookup(), Entered.class, "left", boolean.class);

        private final boolean exclusive;

        @SuppressWarnings("unused") // accessed through LEFT
        private volatile boolean left;

        Entered(boolean exclusive) {
            this.exclusive = exclusive;
        }

        /**
         * Leaves the gate once. No monitor is held while it does: leaving grants the next waiter,
         * whose continuation (a caller's {@code attachAsync} function among them) runs on this
         * thread, and a virtual thread that parks inside a monitor pins its carrier before JDK 24.
         */
        @Override
        public void close() {
            if (!left && LEFT.compareAndSet(this, false, true)) {
                gate.leave(exclusive);
            }
        }
    }
}
