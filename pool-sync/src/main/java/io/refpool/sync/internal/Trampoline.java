package io.refpool.sync.internal;

import java.util.ArrayDeque;

/**
 * Settles waiters' futures outside every internal lock without growing the stack.
 *
 * <p>Completing a future runs its synchronous continuations on the completing thread. A
 * continuation that releases the lock grants the next waiter, whose continuation may release again,
 * and so on: done naively, a queue of 100,000 such waiters is a call chain 100,000 frames deep. The
 * trampoline breaks the chain: the outermost settle on a thread drains a per-thread FIFO, and any
 * settle requested while the thread is already draining is appended to that FIFO instead of being
 * run in place. Order is preserved (FIFO) and each waiter is settled exactly once by the thread
 * that scheduled it. The waiters one release serves are settled as one batch, in queue order, so
 * that no continuation of the first runs before the others are settled.
 *
 * <p>A thread inside a continuation that is about to park in a blocking acquire first runs the
 * settles it deferred ({@link #runDeferredBeforeParking}); otherwise a continuation that releases a
 * lock and then waits for it would wait forever for waiters whose continuations are queued behind
 * its own.
 */
final class Trampoline {
    /** This thread's trampoline, created by its first settle; threads that only park have none. */
    private static final ThreadLocal<Trampoline> CURRENT = new ThreadLocal<>();

    /** Settles waiting their turn on this thread; replaced for the while of {@link #settlingNow}. */
    private ArrayDeque<Waiter> pending = new ArrayDeque<>();

    private boolean draining;
    /** The queues {@link #settlingNow} set aside, oldest first; {@code null} outside it. */
    private ArrayDeque<ArrayDeque<Waiter>> setAside;

    private Trampoline() {}

    private static Trampoline current() {
        Trampoline trampoline = CURRENT.get();
        if (trampoline == null) {
            trampoline = new Trampoline();
            CURRENT.set(trampoline);
        }
        return trampoline;
    }

    /**
     * Runs now the settles this thread deferred, if it is inside a continuation: called by a thread
     * about to park. A continuation that releases a lock and then waits for it must not park while
     * the waiters its release granted sit in its own queue, unsettled: they would never release.
     */
    static void runDeferredBeforeParking() {
        Trampoline trampoline = CURRENT.get();
        if (!insideContinuation(trampoline)) {
            return; // nothing can be deferred
        }
        boolean wasDraining = trampoline.draining;
        trampoline.draining = true; // what these settles ask for queues behind them, as in any drain
        try {
            if (trampoline.setAside != null) { // queues {@link #settlingNow} set aside, oldest first
                // a snapshot: what these settles run may call settlingNow, which sets aside and
                // takes back queues of its own on the same deque while this walks it
                for (Object queue : trampoline.setAside.toArray()) {
                    @SuppressWarnings("unchecked")
                    ArrayDeque<Waiter> waiters = (ArrayDeque<Waiter>) queue;
                    settleAll(waiters);
                }
            }
            settleAll(trampoline.pending);
        } finally {
            trampoline.draining = wasDraining;
            if (!wasDraining && !trampoline.pending.isEmpty()) {
                trampoline.drain(trampoline.pending.pollFirst()); // inside settlingNow's release: as it would
            }
        }
    }

    /** {@return whether this thread deferred settles that have not run yet} */
    static boolean hasDeferred() {
        Trampoline trampoline = CURRENT.get();
        if (!insideContinuation(trampoline)) {
            return false;
        }
        if (!trampoline.pending.isEmpty()) {
            return true;
        }
        return trampoline.setAside != null && trampoline.setAside.stream().anyMatch(queue -> !queue.isEmpty());
    }

    /** {@return whether the thread of {@code trampoline} ({@code null}: it has none) runs a continuation} */
    private static boolean insideContinuation(Trampoline trampoline) {
        return trampoline != null && (trampoline.draining || trampoline.setAside != null);
    }

    private static void settleAll(ArrayDeque<Waiter> queue) {
        for (Waiter w = queue.pollFirst(); w != null; w = queue.pollFirst()) {
            w.settleFuture(); // still draining: what these continuations settle is queued behind
        }
    }

    /**
     * Runs {@code release} so that the settles it causes run before this returns, even inside a
     * continuation, while the settles deferred before it stay deferred: for a continuation that gives
     * a lock up and then blocks some other way. Outside a continuation they run at once anyway.
     */
    static void settlingNow(Runnable release) {
        Trampoline trampoline = CURRENT.get();
        if (trampoline == null || !trampoline.draining) {
            release.run();
            return;
        }
        ArrayDeque<Waiter> deferred = trampoline.pending;
        if (trampoline.setAside == null) {
            trampoline.setAside = new ArrayDeque<>();
        }
        trampoline.setAside.addLast(deferred); // still run by a blocking acquire before it parks
        trampoline.pending = new ArrayDeque<>();
        trampoline.draining = false;
        try {
            release.run(); // its settles find the thread not draining: they drain here, with theirs
        } finally {
            trampoline.setAside.removeLast();
            if (trampoline.setAside.isEmpty()) {
                trampoline.setAside = null;
            }
            trampoline.pending = deferred;
            trampoline.draining = true;
        }
    }

    /** Settles {@code waiter}'s future now, or after the settles already running on this thread. */
    static void settle(Waiter waiter) {
        Trampoline trampoline = current();
        if (trampoline.draining) {
            trampoline.pending.addLast(waiter);
            return;
        }
        trampoline.drain(waiter);
    }

    /**
     * Settles a batch of waiters chained through {@link Waiter#next}, in chain order and before
     * any settle that their continuations request; the links are cleared.
     */
    static void settleInOrder(Waiter first) {
        Trampoline trampoline = current();
        for (Waiter w = first; w != null; ) {
            Waiter next = w.next;
            w.next = null;
            trampoline.pending.addLast(w);
            w = next;
        }
        if (!trampoline.draining) {
            trampoline.drain(trampoline.pending.pollFirst());
        }
    }

    private void drain(Waiter first) {
        draining = true;
        try {
            Waiter next = first;
            do {
                next.settleFuture();
                next = pending.pollFirst();
            } while (next != null);
        } finally {
            draining = false;
            if (!pending.isEmpty()) {
                // a continuation threw out of settleFuture (an Error); settle the rest, never lose one
                drain(pending.pollFirst());
            }
        }
    }
}
