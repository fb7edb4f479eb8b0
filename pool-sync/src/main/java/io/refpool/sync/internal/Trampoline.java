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
 * that scheduled it.
 */
final class Trampoline {
    private static final ThreadLocal<Trampoline> CURRENT = ThreadLocal.withInitial(Trampoline::new);

    private final ArrayDeque<Waiter> pending = new ArrayDeque<>();
    private boolean draining;

    private Trampoline() {}

    /** Settles {@code waiter}'s future now, or after the settles already running on this thread. */
    static void settle(Waiter waiter) {
        Trampoline trampoline = CURRENT.get();
        if (trampoline.draining) {
            trampoline.pending.addLast(waiter);
            return;
        }
        trampoline.draining = true;
        try {
            Waiter next = waiter;
            do {
                next.settleFuture();
                next = trampoline.pending.pollFirst();
            } while (next != null);
        } finally {
            trampoline.draining = false;
            if (!trampoline.pending.isEmpty()) {
                // a continuation threw out of settleFuture (an Error); settle the rest, never lose one
                Waiter rest = trampoline.pending.pollFirst();
                settle(rest);
            }
        }
    }
}
