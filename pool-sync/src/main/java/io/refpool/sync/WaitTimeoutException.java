package io.refpool.sync;

import java.time.Duration;
import java.util.Objects;

/**
 * A timed wait that ran out of time.
 *
 * <pre>{@code
 * try (Guard guard = mutex.acquireBlocking(Duration.ofMillis(200))) {
 *     counter++;
 * } catch (WaitTimeoutException e) {
 *     log.warn(e.getMessage()); // "timed out after 200 ms waiting for AsyncMutex"
 * }
 * }</pre>
 *
 * <p>A timeout is not a cancellation (nobody asked the wait to stop; its time was up), so this
 * is no {@link java.util.concurrent.CancellationException}. A blocking wait throws it; an
 * asynchronous wait completes its stage exceptionally with it, so the stage's {@code
 * isCancelled()} is false, {@code join()} throws a {@link
 * java.util.concurrent.CompletionException} and {@code get()} an {@link
 * java.util.concurrent.ExecutionException} whose cause it is, on every JDK.
 *
 * <p>Its message names what was waited for and for how long. Whoever throws it creates it on the
 * thread that waited (or, for an asynchronous wait, gives it the stack of the call that started
 * the wait), so its stack trace shows the caller, not the timer thread that fired. The
 * {@code tryAcquire(Duration)} forms of this package's locks report a timeout as an empty
 * {@link java.util.Optional} instead, as {@code Lock.tryLock(long, TimeUnit)} returns false.
 */
public class WaitTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What was waited for. */
    private final String resource;
    /** How long. */
    private final transient Duration timeout;

    /**
     * Creates the exception.
     *
     * @param resource what was waited for, in words ("the attach gate of pool 'lua'")
     * @param timeout how long the wait was allowed to take
     * @throws NullPointerException if an argument is null
     */
    public WaitTimeoutException(String resource, Duration timeout) {
        super("timed out after " + describe(Objects.requireNonNull(timeout, "timeout")) + " waiting for "
                + Objects.requireNonNull(resource, "resource"));
        this.resource = resource;
        this.timeout = timeout;
    }

    /** {@return what was waited for} */
    public String resource() {
        return resource;
    }

    /** {@return how long the wait was allowed to take} */
    public Duration timeout() {
        return timeout;
    }

    /** {@return {@code timeout} in the unit a reader expects: "150 us", "200 ms", "2.5 s"} */
    static String describe(Duration timeout) {
        if (timeout.getSeconds() >= 1_000_000_000L) { // past what nanoseconds hold: seconds, exactly
            return timeout.getSeconds() + " s";
        }
        long nanos = timeout.toNanos();
        if (nanos < 1_000) {
            return nanos + " ns";
        }
        if (nanos < 1_000_000) {
            return trim(nanos / 1e3) + " us";
        }
        if (nanos < 1_000_000_000) {
            return trim(nanos / 1e6) + " ms";
        }
        return trim(nanos / 1e9) + " s";
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
    }
}
