package io.refpool.sync;

import io.refpool.sync.internal.WaiterQueue;

/**
 * What a continuation does before it blocks on something other than these locks: the completions
 * its own releases caused, which wait on its thread, run first.
 *
 * <pre>{@code
 * AsyncMutex mutex = new AsyncMutex();
 * java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
 * mutex.acquire().thenAccept(guard -> {
 *     guard.close();                  // grants the next waiter; its completion waits on this thread
 *     Continuations.settleDeferred(); // runs it now
 *     done.countDown();               // a latch, Future.get, another library's lock: safe to block on
 * });
 * }</pre>
 *
 * <p>A future is completed on the thread whose release granted it, through a per-thread
 * trampoline: a completion asked for while that thread runs a continuation waits until the
 * continuation returns, so that a long line of waiters cannot overflow the stack. A blocking
 * acquire of this package runs those completions before it parks. A continuation that gives a
 * lock up and then blocks any other way (a latch, {@code Future.get}, another library's lock)
 * would leave the waiter it granted owning the lock without being told, for as long as it blocks,
 * and every later waiter behind it; it calls {@link #settleDeferred()} first.
 */
public final class Continuations {
    private Continuations() {}

    /**
     * Runs the completions this thread deferred while running a continuation, in order; does
     * nothing outside a continuation. What those completions' own continuations release is settled
     * here too.
     */
    public static void settleDeferred() {
        WaiterQueue.settleDeferred();
    }
}
