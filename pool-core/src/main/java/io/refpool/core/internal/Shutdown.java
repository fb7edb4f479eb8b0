package io.refpool.core.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * The pool's lifecycle: open, closing, closed. It decides which {@code close()} does the work, makes
 * the others wait for it (or not, where waiting would wait for itself), and bounds a
 * {@code close(Duration)}. What closing does is the caller's: {@link PoolCore} passes it in.
 *
 * <pre>
 *   state    event                                  next     who
 *   OPEN     close(), wins the CAS                  CLOSING  the closer: runs the close work
 *   CLOSING  close() elsewhere                      CLOSING  waits for CLOSED, unless attached or the closer
 *   CLOSING  the close work returns or throws       CLOSED   the closer; the latch opens either way
 *   CLOSED   close()                                CLOSED   returns at once
 * </pre>
 *
 * {@link #isClosed()} is true from {@code CLOSING} on: nothing new starts once a close began.
 */
final class Shutdown {
    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;

    private final AtomicInteger state = new AtomicInteger(OPEN);
    /** Opened when the state reaches {@code CLOSED}. */
    private final CountDownLatch closed = new CountDownLatch(1);
    /** The thread running the close work, while it runs. */
    private volatile Thread closer;

    /** {@return whether a close began} */
    boolean isClosed() {
        return state.get() != OPEN;
    }

    /** {@return whether the close finished}: the state is {@code CLOSED} */
    boolean isFinished() {
        return state.get() == CLOSED;
    }

    /**
     * Waits until the close finished. {@code false} at once, waiting for nothing, on the thread
     * running the close, which would wait for itself.
     */
    boolean awaitFinished() throws InterruptedException {
        if (closer == Thread.currentThread()) {
            return false;
        }
        closed.await();
        return true;
    }

    /**
     * {@code close()}: runs {@code work} on the first caller, then {@code closing} (still
     * {@code CLOSING}), then opens the latch and runs {@code closed}. A later caller waits for the
     * latch unless {@code attached} (a thread attached to the pool would wait for itself) or it is
     * the closer (a disposer, say).
     */
    void close(Runnable work, BooleanSupplier attached, Runnable closing, Runnable closedAfter) {
        if (!state.compareAndSet(OPEN, CLOSING)) {
            if (closer != Thread.currentThread() && !attached.getAsBoolean()) {
                awaitClosed();
            }
            return;
        }
        closer = Thread.currentThread();
        try {
            work.run();
        } finally {
            try {
                closing.run();
            } finally {
                state.set(CLOSED);
                closer = null;
                closed.countDown(); // even if the close failed: a second close() must not wait forever
                closedAfter.run();
            }
        }
    }

    /**
     * {@code close(Duration)}: starts {@code close} on a thread of its own if nobody closes yet, waits
     * at most {@code timeout} for the latch, and runs {@code atLimit} if it is still shut then. On a
     * thread that close would wait for ({@code attached}, or the closer itself) it runs {@code close}
     * on the calling thread instead, which never waits for itself, and only reports the state. On a
     * thread whose work the close waits for without it being attached ({@code awaitedByClose}: a
     * warm-up's factory) it starts the close if none runs and reports the state without waiting.
     *
     * @return whether the pool is closed
     */
    boolean closeWithin(
            Duration timeout,
            Runnable close,
            BooleanSupplier attached,
            BooleanSupplier awaitedByClose,
            String threadName,
            Runnable atLimit) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("close(timeout) with a negative timeout: " + timeout);
        }
        if (closer == Thread.currentThread() || attached.getAsBoolean()) {
            close.run(); // as close() on this thread: the close it starts or joins never waits for its caller
            return closed.getCount() == 0;
        }
        long nanos = timeout.compareTo(Duration.ofDays(365 * 100)) > 0 ? Long.MAX_VALUE / 2 : timeout.toNanos();
        closeElsewhere(close, threadName);
        if (awaitedByClose.getAsBoolean()) {
            return closed.getCount() == 0; // the close waits for this thread to go on: waiting is futile
        }
        boolean interrupted = false;
        long deadline = System.nanoTime() + nanos;
        try {
            for (; ; ) {
                try {
                    if (closed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        return true;
                    }
                    atLimit.run();
                    return closed.getCount() == 0;
                } catch (InterruptedException e) {
                    interrupted = true; // as close(): not interruptible; the flag is restored below
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Starts {@code close} on a thread of its own if nobody closes yet, and returns without waiting. */
    void closeElsewhere(Runnable close, String threadName) {
        if (state.get() == OPEN) {
            OwnThreads.daemon(close, threadName).start();
        }
    }

    private void awaitClosed() {
        Waits.uninterruptibly(closed::await); // close() is not interruptible
    }
}
