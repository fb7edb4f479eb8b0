package io.refpool.sync;

import io.refpool.sync.internal.SharedSync;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A fair, cancellable reader-writer lock for threads and async tasks alike: many readers, or one
 * writer.
 *
 * <pre>{@code
 * AsyncSharedMutex lock = new AsyncSharedMutex();
 *
 * try (Guard shared = lock.acquireSharedBlocking()) {   // readers run side by side
 *     render(scene);
 * }
 *
 * lock.acquire(token).thenAccept(exclusive -> {         // the writer runs alone
 *     try (exclusive) {
 *         scene.update();
 *     }
 * });
 * }</pre>
 *
 * <p><b>Policy.</b> One FIFO queue serves both sides, and neither starves. A writer that waits
 * holds back every reader that comes after it, even while readers hold the lock; when the lock
 * frees, the head of the queue is served: a writer alone, or every reader queued before the next
 * writer, admitted together as one batch. A cancelled writer that was holding readers back
 * re-admits them at once.
 *
 * <pre>
 *   time ─────────────────────────────────────────────────────────────▶
 *   R1 ███████████                         R1, R2 hold; W arrives and waits;
 *   R2   ███████████                       R3, R4 arrive after W and queue behind it
 *   W          ·····███████
 *   R3             ·······█████████        when W leaves, R3 and R4 enter as one batch
 *   R4               ·····█████████
 * </pre>
 *
 * <p><b>Cost.</b> A reader enters with one CAS while no writer holds or waits, and a CAS lost to
 * another reader is retried, never parked on; a reader leaves with one CAS and takes no lock unless
 * it is the last reader a queued writer waits for. Uncontended guards allocate nothing once the JIT
 * has compiled the caller.
 *
 * <p><b>Ceiling.</b> At most {@link #MAX_READERS} readers hold the lock at once. Past it,
 * {@link #tryLockShared()} fails and an acquire that finds nobody in line, and so could only wait
 * for a reader to leave, is refused with an {@link IllegalStateException} (thrown by a blocking
 * acquire, failing the stage of an async one); one that finds others in line (a writer, or readers
 * the ceiling holds back) joins it and is admitted as readers leave. The count never overflows
 * into the writer bit.
 *
 * <p><b>Ending a wait</b> works as for {@link AsyncMutex}; a reader or writer whose early end wins
 * after a release picked it passes its grant on.
 *
 * <p><b>Releasing.</b> A guard's {@link Guard#close()} releases exactly once. {@link #unlock()}
 * releases only a writer that took the lock with {@link #tryLock()}, as {@link AsyncMutex#unlock()}
 * does: a writer granted from the queue holds through its guard, so a second {@code unlock()} after
 * the first handed the lock on is refused. Readers are one count, however they entered:
 * {@link #unlockShared()} is refused when no reader holds, but while other readers hold, an extra
 * {@code unlockShared()} is taken as one of theirs, and can let a queued writer in while they still
 * read. Pairing each {@code tryLockShared()} with exactly one {@code unlockShared()}, and each
 * {@code tryLock()} with one {@code unlock()}, is the caller's responsibility.
 */
public final class AsyncSharedMutex {
    /** The most readers that can hold the lock at once ({@value}). */
    public static final int MAX_READERS = SharedSync.MAX_READERS;

    private final SharedSync sync;

    /** Creates an unlocked shared mutex. */
    public AsyncSharedMutex() {
        this(MAX_READERS);
    }

    /** A shared mutex with a lower reader ceiling, so tests can reach it. */
    AsyncSharedMutex(int maxReaders) {
        if (maxReaders < 1 || maxReaders > MAX_READERS) {
            throw new IllegalArgumentException(
                    "maxReaders must be between 1 and " + MAX_READERS + ", was " + maxReaders);
        }
        this.sync = new SharedSync(maxReaders);
    }

    // ---------------------------------------------------------------- shared

    /**
     * Acquires the lock shared, asynchronously.
     *
     * @return a stage completed with the guard once granted, or failed with an
     *     {@link IllegalStateException} if {@link #MAX_READERS} readers hold the lock and nothing
     *     else holds this reader back
     */
    public CompletionStage<Guard> acquireShared() {
        return sync.acquireStage(SharedSync.READ, CancellationToken.none());
    }

    /**
     * Acquires the lock shared, asynchronously, unless {@code token} is cancelled first.
     *
     * @param token cancels the wait; if already cancelled, the returned stage has already failed
     * @return a stage completed with the guard, or failed with a
     *     {@link java.util.concurrent.CancellationException} ({@code isCancelled()} is then true),
     *     or with an {@link IllegalStateException} at the reader ceiling, as for
     *     {@link #acquireShared()}
     * @throws NullPointerException if {@code token} is null
     */
    public CompletionStage<Guard> acquireShared(CancellationToken token) {
        return sync.acquireStage(SharedSync.READ, token);
    }

    /**
     * Acquires the lock shared, parking the calling thread until granted.
     *
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws IllegalStateException at the reader ceiling, as for {@link #acquireShared()}
     */
    public Guard acquireSharedBlocking() throws InterruptedException {
        return acquireSharedBlocking(CancellationToken.none());
    }

    /**
     * Acquires the lock shared, parking the calling thread, unless {@code token} is cancelled first.
     *
     * @param token cancels the wait
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws java.util.concurrent.CancellationException if the token is cancelled before the grant
     * @throws NullPointerException if {@code token} is null
     * @throws IllegalStateException at the reader ceiling, as for {@link #acquireShared()}
     */
    public Guard acquireSharedBlocking(CancellationToken token) throws InterruptedException {
        return sync.acquireGuardBlocking(SharedSync.READ, token, "AsyncSharedMutex shared");
    }

    /**
     * Acquires the lock shared, parking the calling thread at most {@code timeout}: the throwing
     * form of {@link #tryAcquireShared(Duration)}.
     *
     * @param timeout the longest wait; zero means do not wait
     * @return the guard
     * @throws WaitTimeoutException if the time ran out first; nothing is owned
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException at the reader ceiling, as for {@link #acquireShared()}
     */
    public Guard acquireSharedBlocking(Duration timeout) throws InterruptedException {
        return sync.acquireGuardWithin(SharedSync.READ, timeout, "AsyncSharedMutex shared");
    }

    /**
     * Acquires the lock shared only if no writer holds or waits and the ceiling is not reached.
     *
     * @return the guard, or empty
     */
    public Optional<Guard> tryAcquireShared() {
        return sync.tryAcquireGuard(SharedSync.READ);
    }

    /**
     * Acquires the lock shared, waiting in line at most {@code timeout}: the {@code try} form, which
     * answers a timeout with an empty result; {@link #acquireSharedBlocking(Duration)} throws instead.
     *
     * @param timeout the longest wait; zero means do not wait
     * @return the guard, or empty if the timeout elapsed first
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException at the reader ceiling, as for {@link #acquireShared()}
     */
    public Optional<Guard> tryAcquireShared(Duration timeout) throws InterruptedException {
        return sync.tryAcquireGuard(SharedSync.READ, timeout, "AsyncSharedMutex shared");
    }

    /**
     * Takes the lock shared if no writer holds or waits; the allocation-free pair of
     * {@link #unlockShared()}.
     *
     * @return whether it was taken; false also at the reader ceiling
     */
    public boolean tryLockShared() {
        return sync.tryLockShared();
    }

    /**
     * Releases a shared hold taken with {@link #tryLockShared()}.
     *
     * <p>Call it exactly once per successful {@code tryLockShared()}. Readers are one count, so the
     * lock cannot tell whose hold this is: while other readers hold, an extra call releases one of
     * their places, and the last of them may then let a waiting writer in early.
     *
     * @throws IllegalStateException if no reader holds the lock; nothing changes
     */
    public void unlockShared() {
        sync.unlockShared();
    }

    // ---------------------------------------------------------------- exclusive

    /**
     * Acquires the lock exclusively, asynchronously.
     *
     * @return a stage completed with the guard once granted
     */
    public CompletionStage<Guard> acquire() {
        return sync.acquireStage(SharedSync.WRITE, CancellationToken.none());
    }

    /**
     * Acquires the lock exclusively, asynchronously, unless {@code token} is cancelled first.
     *
     * @param token cancels the wait; if already cancelled, the returned stage has already failed
     * @return a stage completed with the guard, or failed with a
     *     {@link java.util.concurrent.CancellationException} ({@code isCancelled()} is then true)
     * @throws NullPointerException if {@code token} is null
     */
    public CompletionStage<Guard> acquire(CancellationToken token) {
        return sync.acquireStage(SharedSync.WRITE, token);
    }

    /**
     * Acquires the lock exclusively, parking the calling thread until granted.
     *
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     */
    public Guard acquireBlocking() throws InterruptedException {
        return acquireBlocking(CancellationToken.none());
    }

    /**
     * Acquires the lock exclusively, parking the calling thread, unless {@code token} is cancelled
     * first.
     *
     * @param token cancels the wait
     * @return the guard
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws java.util.concurrent.CancellationException if the token is cancelled before the grant
     * @throws NullPointerException if {@code token} is null
     */
    public Guard acquireBlocking(CancellationToken token) throws InterruptedException {
        return sync.acquireGuardBlocking(SharedSync.WRITE, token, "AsyncSharedMutex");
    }

    /**
     * Acquires the lock exclusively, parking the calling thread at most {@code timeout}: the
     * throwing form of {@link #tryAcquire(Duration)}.
     *
     * @param timeout the longest wait; zero means do not wait
     * @return the guard
     * @throws WaitTimeoutException if the time ran out first; nothing is owned
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public Guard acquireBlocking(Duration timeout) throws InterruptedException {
        return sync.acquireGuardWithin(SharedSync.WRITE, timeout, "AsyncSharedMutex");
    }

    /**
     * Acquires the lock exclusively only if it is free and nobody is queued.
     *
     * @return the guard, or empty
     */
    public Optional<Guard> tryAcquire() {
        return sync.tryAcquireGuard(SharedSync.WRITE);
    }

    /**
     * Acquires the lock exclusively, waiting in line at most {@code timeout}: the {@code try} form,
     * which answers a timeout with an empty result; {@link #acquireBlocking(Duration)} throws instead.
     *
     * @param timeout the longest wait; zero means do not wait
     * @return the guard, or empty if the timeout elapsed first
     * @throws InterruptedException if interrupted before the grant; nothing is owned
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public Optional<Guard> tryAcquire(Duration timeout) throws InterruptedException {
        return sync.tryAcquireGuard(SharedSync.WRITE, timeout, "AsyncSharedMutex");
    }

    /**
     * Takes the lock exclusively if it is free and nobody is queued; the allocation-free pair of
     * {@link #unlock()}.
     *
     * @return whether it was taken
     */
    public boolean tryLock() {
        return sync.tryLock();
    }

    /**
     * Releases an exclusive hold taken with {@link #tryLock()}, serving the head of the queue.
     *
     * <p>A writer holding through a {@link Guard}, as every writer granted from the queue does, is
     * released only by that guard's {@code close()}.
     *
     * @throws IllegalStateException if no writer holds the lock, or the writer holds it through a
     *     guard (for example because an earlier {@code unlock()} already handed it on); nothing
     *     changes
     */
    public void unlock() {
        sync.unlock();
    }

    // ---------------------------------------------------------------- diagnostics

    /** {@return the number of readers holding the lock (diagnostics: may be stale at once)} */
    public int readers() {
        return sync.readers();
    }

    /** {@return whether a writer holds the lock (diagnostics: may be stale at once)} */
    public boolean isWriteLocked() {
        return sync.isWriteLocked();
    }

    /** {@return the number of readers and writers queued (diagnostics: may be stale at once)} */
    public int queueLength() {
        return sync.queueLength();
    }

    @Override
    public String toString() {
        return "AsyncSharedMutex[readers=" + readers() + ", writeLocked=" + isWriteLocked() + ", queued="
                + queueLength() + "]";
    }
}
