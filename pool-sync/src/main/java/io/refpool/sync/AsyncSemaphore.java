package io.refpool.sync;

import io.refpool.sync.internal.SemaphoreSync;
import io.refpool.sync.internal.WaiterQueue;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A fair, cancellable counting semaphore for threads and async tasks alike.
 *
 * <pre>{@code
 * AsyncSemaphore connections = new AsyncSemaphore(8);
 *
 * try (Guard guard = connections.acquireBlocking(2)) {   // two permits, returned by close()
 *     copy(from, to);
 * }
 *
 * connections.acquire(1, token).thenAccept(guard -> {   // async: no thread is parked
 *     try (guard) {
 *         ping();
 *     }
 * });
 * }</pre>
 *
 * <p><b>Fairness.</b> Requests are served strictly in call order: a large request at the head is
 * not overtaken by smaller ones behind it, and while anyone is queued the {@code try} variants fail.
 * A release with waiters queued assigns the permits directly to the head requests that fit.
 *
 * <p><b>Capacity.</b> A semaphore holds at most {@link #maxPermits()} permits. A request for more
 * than that could never be served and is refused: at the call, or through the returned stage of
 * an async acquire.
 *
 * <p><b>Releasing.</b> A guard returns its permits when it is closed, exactly once; a second close is
 * a no-op. {@link #release(int)} returns permits taken with {@link #tryAcquirePermits(int)}, or
 * permits the semaphore was created without: it is refused, changing nothing, if the available
 * permits, the permits held through guards and the released ones would together exceed the maximum.
 * Every waiter is granted a guard, so a second {@code release(n)} after the first handed its permits
 * to waiters is refused. What the semaphore cannot check is which caller of
 * {@code tryAcquirePermits} a release belongs to: a release of permits another such caller still
 * holds is accepted. Pairing each successful {@code tryAcquirePermits(n)} with exactly one
 * {@code release(n)} is the caller's responsibility.
 *
 * <p><b>Ending a wait</b> works as for {@link AsyncMutex}: a wait is either granted, and the guard
 * owns the permits, or ends early (token, timeout, interrupt), and owns nothing; if the early end
 * wins after a release picked the waiter, its permits go on to the next waiters. No permit is ever
 * lost.
 */
public final class AsyncSemaphore {
    private final SemaphoreSync sync;

    /**
     * Creates a semaphore with {@code permits} permits available, which is also its maximum.
     *
     * @param permits the permits, at least 1
     * @throws IllegalArgumentException if {@code permits} is less than 1
     */
    public AsyncSemaphore(int permits) {
        this(requireAtLeastOne(permits), permits);
    }

    private static int requireAtLeastOne(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, was " + permits);
        }
        return permits;
    }

    /**
     * Creates a semaphore holding at most {@code maxPermits}, of which {@code initialPermits} are
     * available now.
     *
     * @param initialPermits the permits available now, from 0 to {@code maxPermits}
     * @param maxPermits the most permits the semaphore can hold, at least 1
     * @throws IllegalArgumentException if the counts are out of range
     */
    public AsyncSemaphore(int initialPermits, int maxPermits) {
        if (maxPermits < 1) {
            throw new IllegalArgumentException("maxPermits must be at least 1, was " + maxPermits);
        }
        if (initialPermits < 0 || initialPermits > maxPermits) {
            throw new IllegalArgumentException(
                    "initialPermits must be between 0 and maxPermits (" + maxPermits + "), was " + initialPermits);
        }
        this.sync = new SemaphoreSync(initialPermits, maxPermits);
    }

    private int checkPermits(int permits) {
        IllegalArgumentException refused = refusal(permits);
        if (refused != null) {
            throw refused;
        }
        return permits;
    }

    /** {@return why a request for {@code permits} is refused, or {@code null} if it is in range} */
    private IllegalArgumentException refusal(int permits) {
        if (permits < 1) {
            return new IllegalArgumentException("permits must be at least 1, was " + permits);
        }
        if (permits > sync.maxPermits()) {
            return new IllegalArgumentException("permits (" + permits + ") exceed the maximum of " + sync.maxPermits()
                    + " this semaphore can ever hold; the request could never be served");
        }
        return null;
    }

    /**
     * Acquires {@code permits} asynchronously.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @return a stage completed with the guard of the permits, in call order, or failed with an
     *     {@link IllegalArgumentException} if {@code permits} is out of range
     */
    public CompletionStage<Guard> acquire(int permits) {
        return acquire(permits, CancellationToken.none());
    }

    /**
     * Acquires {@code permits} asynchronously unless {@code token} is cancelled first.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @param token cancels the wait; if already cancelled, the returned stage has already failed
     * @return a stage completed with the guard, or failed with a
     *     {@link java.util.concurrent.CancellationException} ({@code isCancelled()} is then true),
     *     or with an {@link IllegalArgumentException} if {@code permits} is out of range
     * @throws NullPointerException if {@code token} is null (an async method's only throw)
     */
    public CompletionStage<Guard> acquire(int permits, CancellationToken token) {
        WaiterQueue.requireToken(token);
        IllegalArgumentException refused = refusal(permits);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        return sync.acquireStage(permits, token);
    }

    /**
     * Acquires {@code permits}, parking the calling thread until they are granted.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @return the guard of the permits
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws IllegalArgumentException if {@code permits} is out of range
     */
    public Guard acquireBlocking(int permits) throws InterruptedException {
        return acquireBlocking(permits, CancellationToken.none());
    }

    /**
     * Acquires {@code permits}, parking the calling thread, unless {@code token} is cancelled first.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @param token cancels the wait
     * @return the guard of the permits
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws java.util.concurrent.CancellationException if the token is cancelled before the grant
     * @throws IllegalArgumentException if {@code permits} is out of range
     * @throws NullPointerException if {@code token} is null
     */
    public Guard acquireBlocking(int permits, CancellationToken token) throws InterruptedException {
        return sync.acquireGuardBlocking(checkPermits(permits), token, "AsyncSemaphore");
    }

    /**
     * Acquires {@code permits}, parking the calling thread at most {@code timeout}: the throwing
     * form of {@link #tryAcquire(int, Duration)}.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @param timeout the longest wait; zero means do not wait (the permits are taken only if they
     *     are available and nobody is queued)
     * @return the guard of the permits
     * @throws WaitTimeoutException if the time ran out first; nothing is owned
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws IllegalArgumentException if {@code permits} is out of range or {@code timeout} negative
     * @throws NullPointerException if {@code timeout} is null
     */
    public Guard acquireBlocking(int permits, Duration timeout) throws InterruptedException {
        return sync.acquireGuardWithin(checkPermits(permits), timeout, "AsyncSemaphore");
    }

    /**
     * Acquires {@code permits} only if they are available and nobody is queued.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @return the guard, or empty
     * @throws IllegalArgumentException if {@code permits} is out of range
     */
    public Optional<Guard> tryAcquire(int permits) {
        return sync.tryAcquireGuard(checkPermits(permits));
    }

    /**
     * Acquires {@code permits}, waiting in line at most {@code timeout}: the {@code try} form, which
     * answers a timeout with an empty result; {@link #acquireBlocking(int, Duration)} throws instead.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @param timeout the longest wait; zero means do not wait
     * @return the guard, or empty if the timeout elapsed first
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws IllegalArgumentException if {@code permits} is out of range or {@code timeout} negative
     * @throws NullPointerException if {@code timeout} is null
     */
    public Optional<Guard> tryAcquire(int permits, Duration timeout) throws InterruptedException {
        return sync.tryAcquireGuard(checkPermits(permits), timeout, "AsyncSemaphore");
    }

    /**
     * Takes {@code permits} if available and nobody is queued, without a guard; the allocation-free
     * pair of {@link #release(int)}.
     *
     * @param permits how many, from 1 to {@link #maxPermits()}
     * @return whether they were taken
     * @throws IllegalArgumentException if {@code permits} is out of range
     */
    public boolean tryAcquirePermits(int permits) {
        return sync.tryTake(checkPermits(permits));
    }

    /**
     * Returns {@code permits} taken with {@link #tryAcquirePermits(int)}, or adds permits the
     * semaphore was created without, serving queued requests in order. Permits held through a
     * {@link Guard}, which is what every waiter is granted, come back only by closing it.
     *
     * @param permits how many, at least 1
     * @throws IllegalArgumentException if {@code permits} is less than 1 or above the maximum
     * @throws IllegalStateException if the available permits, those held through guards and
     *     {@code permits} would together exceed {@link #maxPermits()}, as after a second release of
     *     permits a first one already handed to a waiter; nothing changes
     */
    public void release(int permits) {
        sync.releaseRaw(checkPermits(permits));
    }

    /** {@return the permits available now (diagnostics: may be stale at once)} */
    public int availablePermits() {
        return sync.availablePermits();
    }

    /** {@return the most permits this semaphore can hold} */
    public int maxPermits() {
        return sync.maxPermits();
    }

    /** {@return the number of requests queued (diagnostics: may be stale at once)} */
    public int queueLength() {
        return sync.queueLength();
    }

    @Override
    public String toString() {
        return "AsyncSemaphore[available=" + availablePermits() + "/" + maxPermits() + ", queued=" + queueLength()
                + "]";
    }
}
