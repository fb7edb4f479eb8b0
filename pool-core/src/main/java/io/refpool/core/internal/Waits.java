package io.refpool.core.internal;

import io.refpool.core.Handle;
import io.refpool.core.ObjectCreationException;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * How the pool's waits end, each way in one place: the timed forms' argument and timer, a timeout
 * made on the waiting thread, a token's cancellation named after what was waited for, an interrupt
 * reported unchecked with the thread's interrupt status kept, and the failure a stage reports
 * without the wrapper its dependents add.
 *
 * <pre>
 *   a wait ends by      a blocking wait throws          an async stage completes exceptionally with
 *   its time limit      WaitTimeoutException            WaitTimeoutException (not cancelled)
 *   a token             CancellationException, named    CancellationException, named (cancelled)
 *   an interrupt        WaitInterruptedException,       (no thread waits)
 *                       the interrupt status set
 * </pre>
 *
 * <p>A stage the pool returns is completed with the failure itself ({@code completeExceptionally},
 * never {@code cancel()} and never a {@link CompletionException} wrapper), so a cancelled one reads
 * as cancelled and {@code join()} throws the same kind of exception whichever path failed it.
 */
final class Waits {
    private Waits() {}

    /**
     * Sets the calling thread's interrupt status again if a user's callback (factory, validator,
     * disposer, interrupter) threw {@code failure} as an {@link InterruptedException}: the pool
     * reports or wraps that failure instead of rethrowing it, and an interrupt the callback took
     * must not be lost to the code that runs the thread.
     */
    static void keepInterrupt(Throwable failure) {
        if (failure instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@return {@code timeout}}, checked: zero means do not wait
     *
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException naming it and its value if it is negative
     */
    static Duration checked(Duration timeout) {
        IllegalArgumentException refused = refusal(timeout);
        if (refused != null) {
            throw refused;
        }
        return timeout;
    }

    /**
     * {@return why {@code timeout} is refused, or {@code null} if it is not}: for an async wait,
     * which fails its stage with it
     *
     * @throws NullPointerException if it is null: the one failure an async call throws
     */
    static IllegalArgumentException refusal(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return timeout.isNegative()
                ? new IllegalArgumentException("timeout must not be negative, was " + timeout)
                : null;
    }

    /** {@return a source whose token is cancelled after {@code timeout}}, to close when the wait ends */
    static CancellationSource timer(Duration timeout) {
        CancellationSource timer = new CancellationSource();
        arm(timer, timeout);
        return timer;
    }

    /**
     * Arms {@code timer} to be cancelled after {@code timeout} on a thread of the pool's own: a wait
     * it ends may let the waiters behind it through, and their continuations (another request's
     * factory, its disposers) then run where it is cancelled.
     */
    static void arm(CancellationSource timer, Duration timeout) {
        timer.cancelAfter(timeout, OwnThreads::interrupt);
    }

    /**
     * {@return the cancellation of a wait for {@code resource}, named after it} (the key and the
     * pool, not the lock underneath); any other failure is returned as it is. It has no cause: from
     * JDK 23 on, {@code join()} and {@code get()} report a stage's cancellation as the cause of a
     * new one, and a caller finds the message in "the exception, or its cause if that is a
     * cancellation", which a cancellation caused by another would confuse.
     */
    static Throwable named(Throwable failure, String resource) {
        if (!(failure instanceof CancellationException)) {
            return failure;
        }
        return new CancellationException("cancelled while waiting for " + resource);
    }

    /** {@return {@code failure}}, counted by {@code pool} if it is a timeout */
    static <T extends Throwable> T counted(T failure, PoolState pool) {
        if (failure instanceof WaitTimeoutException) {
            pool.timedOut();
        }
        return failure;
    }

    /**
     * {@return what to throw for {@code failure}, a cancellation that ended a wait timed by
     * {@code timer}}: a timeout named after {@code resource} if the timer fired, otherwise
     * {@code failure} itself. An interrupt that raced the timer stays set on the thread.
     */
    static RuntimeException ended(
            CancellationException failure, CancellationSource timer, String resource, Duration timeout) {
        return timer.isCancellationRequested() ? new WaitTimeoutException(resource, timeout) : failure;
    }

    /**
     * {@return the exception a blocking wait for {@code resource} throws for {@code interrupt}},
     * with the thread's interrupt status set again
     */
    static WaitInterruptedException interrupted(String resource, InterruptedException interrupt) {
        Thread.currentThread().interrupt();
        return new WaitInterruptedException(resource, interrupt);
    }

    /** Completes {@code result} with what {@code step} returns, or with what it throws. */
    static <T> void completeWith(CompletableFuture<T> result, Supplier<? extends T> step) {
        T value;
        try {
            value = step.get();
        } catch (Throwable t) {
            result.completeExceptionally(t);
            return;
        }
        result.complete(value);
    }

    /**
     * {@return {@code call}'s stage, started on the library's call threads if this is one of the
     * drainer threads every pool shares (a disposer's call), else here} A timed async call made on a
     * drainer thread has its attempt (and any factory) moved to a call thread ({@link
     * Attacher#attachAsync}), so, started there, it would find nothing granted at once and time that
     * move: a zero limit would fail it with everything free. Started on a call thread, it is timed
     * as from any thread. The returned stage, settled by the caller, ends the call's waits; a value
     * {@code call} completes with after that goes to {@code unwanted}.
     */
    static <T> CompletionStage<T> offTheDrainer(Supplier<CompletionStage<T>> call, Consumer<? super T> unwanted) {
        if (!DrainerThreads.owns(Thread.currentThread())) {
            return call.get();
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            OwnThreads.calls().execute(() -> {
                if (result.isDone()) {
                    return; // the caller gave up before it started
                }
                CompletableFuture<T> started;
                try {
                    started = call.get().toCompletableFuture();
                } catch (Throwable t) {
                    result.completeExceptionally(t);
                    return;
                }
                result.whenComplete((value, failure) -> started.cancel(false)); // the caller's settling ends it
                started.whenComplete((value, failure) -> {
                    if (failure != null) {
                        result.completeExceptionally(unwrapped(failure));
                    } else if (!result.complete(value)) {
                        unwanted.accept(value);
                    }
                });
            });
        } catch (Throwable noThread) {
            result.completeExceptionally(noThread);
        }
        return result;
    }

    /** A wait that an interrupt may end early. */
    @FunctionalInterface
    interface Interruptible {
        void await() throws InterruptedException;
    }

    /**
     * Runs {@code wait} until it returns without being interrupted: a wait that must not be cut
     * short ({@code close()}'s). An interrupt meanwhile is kept and restored once it returns.
     */
    static void uninterruptibly(Interruptible wait) {
        boolean interrupted = false;
        for (; ; ) {
            try {
                wait.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return {@code failure} without the {@link CompletionException} a dependent stage wraps it in} */
    static Throwable unwrapped(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * {@return the handle {@code stage} completes with}, parking until it does, with the failures
     * a blocking wait reports: what failed the stage, thrown as it is (a checked factory failure
     * as an {@link ObjectCreationException}); an interrupt ends the wait, closes a handle that
     * arrives anyway, and is thrown as a {@link WaitInterruptedException} naming {@code resource}.
     */
    static <V> Handle<V> await(CompletionStage<Handle<V>> stage, String resource) {
        CompletableFuture<Handle<V>> waiting = stage.toCompletableFuture();
        try {
            return waiting.get();
        } catch (InterruptedException e) {
            if (!waiting.cancel(false) && !waiting.isCompletedExceptionally()) {
                waiting.join().close(); // granted just before the interrupt: nothing is held
            }
            throw interrupted(resource, e);
        } catch (CancellationException e) { // JDK 23 and later report the stage's own as the cause of a new one
            throw e.getCause() instanceof CancellationException ? (CancellationException) e.getCause() : e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new ObjectCreationException(
                    "creating an object failed with " + cause.getClass().getName(), cause);
        }
    }
}
