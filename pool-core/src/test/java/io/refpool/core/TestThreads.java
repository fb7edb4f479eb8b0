package io.refpool.core;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;

/** Bounded waits and forked threads for the attach and release tests. */
final class TestThreads {
    /** The bound of every wait: long enough for a loaded machine, short enough to fail a hang. */
    static final Duration BOUND = Duration.ofSeconds(30);

    private TestThreads() {}

    /** {@return an Awaitility condition for "eventually", bounded by {@link #BOUND}} */
    static ConditionFactory eventually() {
        return Awaitility.await()
                .atMost(BOUND)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .pollInSameThread();
    }

    /** A body run on a forked thread. */
    @FunctionalInterface
    interface Body<T> {
        T call() throws Exception;
    }

    /** A body without a result. */
    @FunctionalInterface
    interface Action {
        void run() throws Exception;
    }

    /** A daemon platform thread running one body, and the body's outcome. */
    static final class Forked<T> {
        final Thread thread;
        final CompletableFuture<T> outcome = new CompletableFuture<>();

        private Forked(String name, Body<T> body) {
            this.thread = new Thread(
                    () -> {
                        try {
                            outcome.complete(body.call());
                        } catch (Throwable t) {
                            outcome.completeExceptionally(t);
                        }
                    },
                    name);
            thread.setDaemon(true);
        }

        /** Starts the thread; separate from creation so hooks can name the thread first. */
        Forked<T> start() {
            thread.start();
            return this;
        }

        /** {@return the body's result}, waiting at most {@link #BOUND}; rethrows its failure. */
        T join() throws Exception {
            try {
                return outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception) {
                    throw (Exception) cause;
                }
                throw (Error) cause;
            } catch (TimeoutException e) {
                throw new AssertionError(
                        thread.getName() + " did not finish within " + BOUND + ": " + describeStack(thread));
            }
        }

        /** {@return the body's failure}, waiting at most {@link #BOUND}; fails if it returned. */
        Throwable joinFailure() throws Exception {
            T value;
            try {
                value = outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            } catch (CancellationException e) {
                return e; // the body threw it: a future failed with one reports it as cancelled
            } catch (ExecutionException e) {
                return e.getCause();
            } catch (TimeoutException e) {
                throw new AssertionError(
                        thread.getName() + " did not finish within " + BOUND + ": " + describeStack(thread));
            }
            throw new AssertionError(thread.getName() + " was expected to fail but returned " + value);
        }
    }

    /** {@return a forked body, not started yet} */
    static <T> Forked<T> unstarted(String name, Body<T> body) {
        return new Forked<>(name, body);
    }

    /** {@return a forked action, not started yet} */
    static Forked<Void> unstartedRun(String name, Action action) {
        return new Forked<>(name, () -> {
            action.run();
            return null;
        });
    }

    /** {@return a started forked body} */
    static <T> Forked<T> fork(String name, Body<T> body) {
        return unstarted(name, body).start();
    }

    /** {@return a started forked action} */
    static Forked<Void> forkRun(String name, Action action) {
        return unstartedRun(name, action).start();
    }

    /** Waits, bounded, until {@code thread} parks (waiting for a lock, a latch or a future). */
    static void awaitParked(Thread thread) {
        eventually()
                .alias(thread.getName() + " parks")
                .until(() ->
                        thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING);
    }

    static String describeStack(Thread thread) {
        StringBuilder sb = new StringBuilder(thread.getState().toString());
        for (StackTraceElement e : thread.getStackTrace()) {
            sb.append("\n\tat ").append(e);
        }
        return sb.toString();
    }
}
