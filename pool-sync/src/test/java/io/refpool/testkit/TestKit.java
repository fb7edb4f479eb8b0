package io.refpool.testkit;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;

/**
 * The test kit every module's tests share: one bound for every wait, one "eventually", one way to
 * run a body on a forked thread and collect its outcome.
 *
 * <pre>{@code
 * Forked<Guard> waiter = TestKit.fork("waiter", () -> mutex.lock());
 * TestKit.awaitParked(waiter.thread);
 * held.close();
 * waiter.join().close();
 * }</pre>
 */
public final class TestKit {
    /** The bound of every wait in a test: long enough for a loaded machine, short enough to fail a hang. */
    public static final Duration BOUND = Duration.ofSeconds(30);

    private TestKit() {}

    /** {@return an Awaitility condition for "eventually", bounded by {@link #BOUND}, polled from the test thread} */
    public static ConditionFactory eventually() {
        return Awaitility.await()
                .atMost(BOUND)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .pollInSameThread();
    }

    /** A body run on a forked thread. */
    @FunctionalInterface
    public interface Body<T> {
        T call() throws Exception;
    }

    /** A body without a result. */
    @FunctionalInterface
    public interface Action {
        void run() throws Exception;
    }

    /** A daemon platform thread running one body, and the body's outcome. */
    public static final class Forked<T> {
        public final Thread thread;
        public final CompletableFuture<T> outcome = new CompletableFuture<>();

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

        /** Starts the thread; separate from creation so a hook can learn the thread first. */
        public Forked<T> start() {
            thread.start();
            return this;
        }

        /** {@return the body's result}, waiting at most {@link #BOUND}; rethrows what the body threw. */
        public T join() throws Exception {
            Throwable failure = settle();
            if (failure == null) {
                return outcome.getNow(null);
            }
            if (failure instanceof Exception) {
                throw (Exception) failure;
            }
            throw (Error) failure;
        }

        /** {@return what the body threw}, waiting at most {@link #BOUND}; fails if the body returned. */
        public Throwable joinFailure() {
            Throwable failure = settle();
            if (failure == null) {
                throw new AssertionError(
                        thread.getName() + " was expected to fail but returned " + outcome.getNow(null));
            }
            return failure;
        }

        /** Waits for the outcome; {@return the body's own failure, or null if it returned} */
        private Throwable settle() {
            try {
                outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                return null;
            } catch (CancellationException e) {
                // the body threw it; a future failed with one reports it as cancelled (newer JDKs
                // wrap it in a new CancellationException caused by the body's)
                return e.getCause() instanceof CancellationException ? e.getCause() : e;
            } catch (ExecutionException e) {
                return e.getCause();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while joining " + thread.getName(), e);
            } catch (TimeoutException e) {
                throw new AssertionError(
                        thread.getName() + " did not finish within " + BOUND + ": " + describeStack(thread));
            }
        }
    }

    /** {@return a forked body, not started yet} */
    public static <T> Forked<T> unstarted(String name, Body<T> body) {
        return new Forked<>(name, body);
    }

    /** {@return a forked action, not started yet} */
    public static Forked<Void> unstartedRun(String name, Action action) {
        return new Forked<>(name, () -> {
            action.run();
            return null;
        });
    }

    /** {@return {@code body} started on a new daemon platform thread} */
    public static <T> Forked<T> fork(String name, Body<T> body) {
        return unstarted(name, body).start();
    }

    /** {@return {@code action} started on a new daemon platform thread} */
    public static Forked<Void> forkRun(String name, Action action) {
        return unstartedRun(name, action).start();
    }

    /**
     * {@return the cancellation {@code stage} settled with}, read the way the docs tell a caller to
     * read it on any JDK: {@code join()} throws it itself up to JDK 22, and from JDK 23 a new
     * {@link CancellationException} caused by it. Waits, bounded, for the stage to settle; fails if
     * it was not cancelled, or if {@code get()} reports it otherwise.
     */
    public static CancellationException joinedCancellation(CompletionStage<?> stage) {
        CompletableFuture<?> future = settled(stage);
        if (!future.isCancelled()) {
            throw new AssertionError("expected a cancelled stage, was " + future);
        }
        CancellationException viaGet = assertCancellationFrom(future::get);
        CancellationException viaJoin = assertCancellationFrom(future::join);
        if (viaGet != viaJoin) {
            throw new AssertionError("get() and join() report different cancellations: " + viaGet + ", " + viaJoin);
        }
        return viaJoin;
    }

    private static CancellationException assertCancellationFrom(Body<?> read) {
        try {
            Object value = read.call();
            throw new AssertionError("expected a cancellation, the stage completed with " + value);
        } catch (CancellationException e) {
            return e.getCause() instanceof CancellationException ? (CancellationException) e.getCause() : e;
        } catch (Exception e) {
            throw new AssertionError("expected a CancellationException, got " + e, e);
        }
    }

    /**
     * {@return what {@code stage} failed with}, read through {@code join()} and {@code get()}, which
     * must throw a {@link CompletionException} and an {@link ExecutionException} caused by it, with
     * {@code isCancelled()} false. Waits, bounded, for the stage to settle.
     */
    public static Throwable joinedFailure(CompletionStage<?> stage) {
        CompletableFuture<?> future = settled(stage);
        if (future.isCancelled()) {
            throw new AssertionError("expected a failed stage that is not cancelled, was " + future);
        }
        Throwable viaJoin;
        try {
            throw new AssertionError("expected a failure, the stage completed with " + future.join());
        } catch (CompletionException e) {
            viaJoin = e.getCause();
        }
        try {
            throw new AssertionError("expected a failure, the stage completed with " + future.get());
        } catch (ExecutionException e) {
            if (e.getCause() != viaJoin) {
                throw new AssertionError(
                        "get() and join() report different failures: " + e.getCause() + ", " + viaJoin);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while reading " + future, e);
        }
        return viaJoin;
    }

    private static CompletableFuture<?> settled(CompletionStage<?> stage) {
        CompletableFuture<?> future = stage.toCompletableFuture();
        eventually().alias("the stage settles").until(future::isDone);
        return future;
    }

    /** Waits, bounded, until {@code thread} parks (waiting for a lock, a latch or a future). */
    public static void awaitParked(Thread thread) {
        eventually()
                .alias(thread.getName() + " parks")
                .until(() ->
                        thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING);
    }

    /** {@return the thread's state and stack, for a failure message} */
    public static String describeStack(Thread thread) {
        StringBuilder sb = new StringBuilder(thread.getState().toString());
        for (StackTraceElement e : thread.getStackTrace()) {
            sb.append("\n\tat ").append(e);
        }
        return sb.toString();
    }

    /**
     * {@return {@code Executors.newVirtualThreadPerTaskExecutor()} on JDK 21+, or {@code null}
     * before}: the tests compile for Java 17, so it is looked up at run time
     */
    public static java.util.concurrent.ExecutorService virtualThreadPerTaskExecutorOrNull() throws Throwable {
        try {
            return (java.util.concurrent.ExecutorService) java.lang.invoke.MethodHandles.publicLookup()
                    .findStatic(
                            java.util.concurrent.Executors.class,
                            "newVirtualThreadPerTaskExecutor",
                            java.lang.invoke.MethodType.methodType(java.util.concurrent.ExecutorService.class))
                    .invoke();
        } catch (NoSuchMethodException beforeJdk21) {
            return null;
        }
    }

    /** One round of a grant-versus-cancel race, which checks its own outcome. */
    @FunctionalInterface
    public interface RaceRound {
        /**
         * Runs round {@code round} of run {@code run} (later runs widen the sweep), asserting the
         * outcome is a legal one.
         *
         * @return whether the grant won
         */
        boolean run(int round, int run) throws Exception;
    }

    /** How many runs of its rounds a race gets to end both ways. */
    public static final int RACE_RUNS = 3;

    /**
     * Runs {@code rounds} rounds of a race, and again (up to {@link #RACE_RUNS} runs, each with a
     * wider sweep) while the grant has won all of them or none. Every round asserts its own
     * outcome, so a wrong one fails the test whatever the tally. A race that still ended one way in
     * every round is reported as skipped rather than passed: it proved nothing about the other way.
     * On a loaded machine one side can be starved for a whole run, which is why the primitives'
     * outcomes are also forced one at a time with hooks (WaitCancellationTest, WaitingContractTest).
     */
    public static void raceBothWays(String race, int rounds, RaceRound round) throws Exception {
        int granted = 0;
        int total = 0;
        for (int run = 0; run < RACE_RUNS && (granted == 0 || granted == total); run++) {
            for (int r = 0; r < rounds; r++, total++) {
                granted += round.run(r, run) ? 1 : 0;
            }
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(
                granted > 0 && granted < total,
                race + ": the race ended one way in all " + total + " rounds (the grant won " + granted + ")");
    }
}
