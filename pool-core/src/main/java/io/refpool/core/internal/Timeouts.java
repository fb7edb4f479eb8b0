package io.refpool.core.internal;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;

/**
 * The timed forms of the pool's waits: the argument's check, and turning the cancellation of a wait
 * whose timer fired into a {@link WaitTimeoutException} created on the waiting thread.
 */
final class Timeouts {
    private Timeouts() {}

    /** {@return {@code timeout}}, checked: not null, positive */
    static Duration positive(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        return timeout;
    }

    /** {@return a source whose token is cancelled after {@code timeout}}, to close when the wait ends */
    static CancellationSource timer(Duration timeout) {
        CancellationSource timer = new CancellationSource();
        timer.cancelAfter(timeout);
        return timer;
    }

    /**
     * {@return the cancellation of a wait for {@code resource}, named after it} (the key and the
     * pool, not the lock underneath), with the lock's own exception as its cause; any other failure
     * is returned as it is
     */
    static Throwable named(Throwable failure, String resource) {
        if (!(failure instanceof CancellationException)
                || failure instanceof WaitTimeoutException
                || failure instanceof io.refpool.core.PoolClosedException) {
            return failure;
        }
        CancellationException named = new CancellationException("cancelled while waiting for " + resource);
        named.initCause(failure);
        return named;
    }

    /**
     * {@return what to throw for {@code failure}, which ended a wait timed by {@code timer}}: a
     * timeout named after {@code resource} if the timer fired and the thread was not interrupted
     * (an interrupt wins), otherwise {@code failure} itself
     */
    static CancellationException ended(
            CancellationException failure, CancellationSource timer, String resource, Duration timeout) {
        if (timer.isCancellationRequested() && !Thread.currentThread().isInterrupted()) {
            return new WaitTimeoutException(resource, timeout);
        }
        return failure;
    }
}
