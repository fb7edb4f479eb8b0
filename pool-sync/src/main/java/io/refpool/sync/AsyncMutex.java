package io.refpool.sync;

import io.refpool.sync.internal.MutexSync;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A fair, cancellable mutual-exclusion lock for threads and async tasks alike.
 *
 * <pre>{@code
 * AsyncMutex mutex = new AsyncMutex();
 *
 * try (Guard guard = mutex.acquireBlocking()) {       // a thread that may park
 *     counter++;
 * }
 *
 * mutex.acquire(token).thenAccept(guard -> {          // an async task: no thread is parked
 *     try (guard) {
 *         counter++;
 *     }
 * });
 * }</pre>
 *
 * <p><b>Fairness.</b> Waiters are served strictly in the order they called. A release with waiters
 * queued hands the lock directly to the head waiter; nobody barges in between, so
 * {@link #tryLock()} and {@link #tryAcquire()} fail while anyone is queued.
 *
 * <p><b>Ending a wait.</b> A wait ends in exactly one of two ways: the lock is granted (the caller
 * owns it and must close the guard) or the wait ends without it (the caller owns nothing). It ends
 * early on the token ({@link java.util.concurrent.CancellationException}), a timeout
 * ({@link WaitTimeoutException}, or an empty {@code Optional} from the {@code try} form), an
 * interrupt ({@link InterruptedException}), or the returned future's own {@code cancel},
 * {@code complete}, {@code completeExceptionally} or {@code orTimeout}; whichever happens, the lock
 * is never lost: if the grant already won, the future completes with the guard, and if the early
 * end won after a release had picked the waiter, the lock passes on to the next waiter. A zero
 * timeout does not wait; a negative one is refused.
 *
 * <p><b>Cost.</b> Uncontended {@link #tryLock()}+{@link #unlock()} is one CAS each and allocates
 * nothing; so does {@link #acquireBlocking()} followed by closing the guard, once the JIT has
 * compiled the caller. An uncontended {@link #acquire()} allocates at most the guard, which is its
 * own completed stage. Only a waiting acquire allocates a waiter, which serves as its future and its
 * guard. Futures are completed outside internal locks, and the continuations of waiters that
 * releases grant in turn run in a loop rather than growing the stack. An acquire that succeeds at
 * once returns a completed stage, whose dependent actions run in place, as a completed {@code
 * CompletableFuture}'s do: a chain that releases and re-acquires a free lock that way grows the
 * stack once per link.
 *
 * <p><b>Releasing.</b> A guard's {@link Guard#close()} releases exactly once; a second close is a
 * no-op. {@link #unlock()} releases only a lock taken with {@link #tryLock()}: it refuses a lock
 * held through a guard, and every waiter is granted one, so a second {@code unlock()} after the first
 * handed the lock to a waiter is refused and changes nothing. What the mutex cannot check is who
 * calls {@code unlock()}: it has no owner token, so while a {@code tryLock()} holder holds, an
 * {@code unlock()} from anyone is taken as that holder's and, with waiters queued, hands the lock
 * to the next one. Pairing each {@code tryLock()} with exactly one {@code unlock()} is the caller's
 * responsibility.
 *
 * <p>Not reentrant: a thread holding the lock that acquires it again waits for itself. Parking uses
 * {@link java.util.concurrent.locks.LockSupport}, so virtual threads unmount while they wait.
 */
public final class AsyncMutex {
    private final MutexSync sync = new MutexSync();

    /** Creates an unlocked mutex. */
    public AsyncMutex() {}

    /**
     * Acquires the lock asynchronously.
     *
     * @return a stage completed with the guard once the lock is granted, in call order
     */
    public CompletionStage<Guard> acquire() {
        return sync.acquireStage(MutexSync.ONE, CancellationToken.none());
    }

    /**
     * Acquires the lock asynchronously unless {@code token} is cancelled first.
     *
     * @param token cancels the wait; if already cancelled, the returned stage has already failed
     * @return a stage completed with the guard, or failed with a
     *     {@link java.util.concurrent.CancellationException} ({@code isCancelled()} is then true)
     * @throws NullPointerException if {@code token} is null
     */
    public CompletionStage<Guard> acquire(CancellationToken token) {
        return sync.acquireStage(MutexSync.ONE, token);
    }

    /**
     * Acquires the lock, parking the calling thread while others hold it or wait before it.
     *
     * @return the guard
     * @throws InterruptedException if the thread is interrupted before the lock is granted; the wait
     *     is then cancelled and nothing is owned
     */
    public Guard acquireBlocking() throws InterruptedException {
        return sync.acquireGuardBlocking(MutexSync.ONE, CancellationToken.none(), "AsyncMutex");
    }

    /**
     * Acquires the lock, parking the calling thread, unless {@code token} is cancelled first.
     *
     * @param token cancels the wait
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws java.util.concurrent.CancellationException if the token is cancelled before the grant
     * @throws NullPointerException if {@code token} is null
     */
    public Guard acquireBlocking(CancellationToken token) throws InterruptedException {
        return sync.acquireGuardBlocking(MutexSync.ONE, token, "AsyncMutex");
    }

    /**
     * Acquires the lock, parking the calling thread at most {@code timeout}: the throwing form of
     * {@link #tryAcquire(Duration)}.
     *
     * @param timeout the longest wait; zero means do not wait (the lock is taken only if it is free
     *     and nobody is queued)
     * @return the guard
     * @throws WaitTimeoutException if the time ran out first; nothing is owned
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public Guard acquireBlocking(Duration timeout) throws InterruptedException {
        return sync.acquireGuardWithin(MutexSync.ONE, timeout, "AsyncMutex");
    }

    /**
     * Acquires the lock only if it is free and nobody is queued.
     *
     * @return the guard, or empty
     */
    public Optional<Guard> tryAcquire() {
        return sync.tryAcquireGuard(MutexSync.ONE);
    }

    /**
     * Acquires the lock, waiting in line at most {@code timeout}: the {@code try} form, which
     * answers a timeout with an empty result, as {@code Lock.tryLock(long, TimeUnit)} returns false;
     * {@link #acquireBlocking(Duration)} throws instead.
     *
     * @param timeout the longest wait; zero means do not wait
     * @return the guard, or empty if the timeout elapsed first
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public Optional<Guard> tryAcquire(Duration timeout) throws InterruptedException {
        return sync.tryAcquireGuard(MutexSync.ONE, timeout, "AsyncMutex");
    }

    /**
     * Takes the lock if it is free and nobody is queued; the allocation-free pair of
     * {@link #unlock()}.
     *
     * @return whether the lock was taken
     */
    public boolean tryLock() {
        return sync.tryLock();
    }

    /**
     * Releases a lock taken with {@link #tryLock()}, handing it to the head waiter if any.
     *
     * <p>Call it exactly once per successful {@code tryLock()}: the mutex cannot tell which caller
     * holds a lock taken that way, so an extra {@code unlock()} while it is so held releases it from
     * under its holder. A lock held through a {@link Guard} (which is what every waiter is granted) is
     * released only by that guard's {@code close()}.
     *
     * @throws IllegalStateException if the mutex is not locked, or is held through a guard (for
     *     example because an earlier {@code unlock()} already handed it to a waiter); nothing changes
     */
    public void unlock() {
        sync.unlock();
    }

    /** {@return whether the mutex is held (diagnostics: may be stale at once)} */
    public boolean isLocked() {
        return sync.isLocked();
    }

    /** {@return the number of waiters queued (diagnostics: may be stale at once)} */
    public int queueLength() {
        return sync.queueLength();
    }

    @Override
    public String toString() {
        return "AsyncMutex[" + (isLocked() ? "locked" : "unlocked") + ", queued=" + queueLength() + "]";
    }
}
