package io.refpool.sync;

import io.refpool.sync.internal.WaiterQueue;
import java.util.Objects;

/**
 * What a continuation does when it gives a lock up and then blocks on something other than these
 * locks: it gives the lock up through {@link #releaseNow}, so the waiter that release grants is told
 * at once.
 *
 * <pre>{@code
 * AsyncMutex mutex = new AsyncMutex();
 * java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
 * mutex.acquire().thenAccept(guard -> {
 *     Continuations.releaseNow(guard::close); // the next waiter's completion runs here, now
 *     done.countDown();                // a latch, Future.get, another library's lock: safe to block on
 * });
 * }</pre>
 *
 * <p>A future is completed on the thread whose release granted it, through a per-thread
 * trampoline: a completion asked for while that thread runs a continuation waits until the
 * continuation returns, so that a long line of waiters cannot overflow the stack. A blocking
 * acquire of this package runs those completions before it parks. {@link #releaseNow} settles
 * what its release causes before it returns, so a line of waiters whose continuations each give
 * the lock up through it nests one call per waiter: keep it for a continuation about to block. A continuation that gives a
 * lock up and then blocks any other way would leave the waiter it granted owning the lock without
 * being told, for as long as it blocks, and every later waiter behind it.
 */
public final class Continuations {
    private Continuations() {}

    /**
     * Runs {@code release}, which gives ownership up (a guard's {@code close}, a raw {@code
     * unlock()} or {@code release(n)}); the completions it causes (the waiters it grants, and what
     * their continuations release in turn) run before this returns, even inside a continuation.
     * Completions this thread deferred before are left where they are, for the continuation's end.
     *
     * @param release what gives the ownership up
     * @throws NullPointerException if {@code release} is null
     */
    public static void releaseNow(Runnable release) {
        Objects.requireNonNull(release, "release");
        WaiterQueue.settlingNow(release);
    }
}
