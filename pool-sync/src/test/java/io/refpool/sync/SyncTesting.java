package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.sync.internal.WaiterQueue;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;

/** Small helpers shared by the lock tests: bounded waits, forked threads, future outcomes. */
final class SyncTesting {
    /** The bound of every wait in a test: long enough for a loaded machine, short enough to fail. */
    static final Duration BOUND = Duration.ofSeconds(20);

    private SyncTesting() {}

    /**
     * {@return the waiter queue behind {@code lock}, to install hooks on}: read from its private
     * {@code sync} field, so the locks carry no test seam of their own
     */
    static WaiterQueue queueOf(Object lock) {
        try {
            java.lang.reflect.Field sync = lock.getClass().getDeclaredField("sync");
            sync.setAccessible(true);
            return (WaiterQueue) sync.get(lock);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("no waiter queue in " + lock, e);
        }
    }

    /** {@return an Awaitility condition for "eventually", bounded, polled from the test thread} */
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

    /** A platform thread running one body, and the outcome of that body. */
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

        /** {@return the body's result}, waiting at most {@link #BOUND}; rethrows its failure. */
        T join() throws Exception {
            try {
                return outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.CancellationException e) {
                // the body threw it; newer JDKs report it as a new exception caused by the body's
                throw e.getCause() instanceof java.util.concurrent.CancellationException
                        ? (java.util.concurrent.CancellationException) e.getCause()
                        : e;
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

        /** {@return the body's failure}, waiting at most {@link #BOUND}; fails if it succeeded. */
        Throwable joinFailure() throws Exception {
            try {
                T value = join();
                throw new AssertionError(thread.getName() + " was expected to fail but returned " + value);
            } catch (Exception e) {
                return e;
            }
        }
    }

    /** Starts {@code body} on a new daemon platform thread. */
    static <T> Forked<T> fork(String name, Body<T> body) {
        Forked<T> forked = new Forked<>(name, body);
        forked.thread.start();
        return forked;
    }

    /** Starts {@code body} on a new daemon platform thread. */
    static Forked<Void> forkRun(String name, Runnable body) {
        return fork(name, () -> {
            body.run();
            return null;
        });
    }

    /**
     * Runs two actions as close to simultaneously as two threads allow, round after round: a helper
     * thread that stays awake between rounds (it spins, then yields, rather than parks, so no
     * wake-up latency separates the two sides) and the caller both spin on a gate that opens when both arrived,
     * falling back to yielding so that a descheduled side is not starved on a machine with few
     * cores.
     */
    static final class Racer implements AutoCloseable {
        private final java.util.concurrent.atomic.AtomicReference<Runnable> task =
                new java.util.concurrent.atomic.AtomicReference<>();
        private final java.util.concurrent.atomic.AtomicInteger arrived =
                new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        private volatile boolean done;
        private volatile boolean closed;
        private final Thread helper;

        Racer() {
            helper = new Thread(this::serve, "racer");
            helper.setDaemon(true);
            helper.start();
        }

        private void serve() {
            int idle = 0;
            while (!closed) {
                Runnable r = task.get();
                if (r == null) {
                    if (++idle < 100_000) {
                        Thread.onSpinWait(); // the next round comes soon: be there when it does
                    } else {
                        Thread.yield();
                    }
                    continue;
                }
                idle = 0;
                arrived.incrementAndGet();
                awaitBoth();
                try {
                    r.run();
                } catch (Throwable t) {
                    failure.set(t);
                }
                task.set(null);
                done = true;
            }
        }

        /** Spins until both sides arrived; yields after a while, in case the other is descheduled. */
        private void awaitBoth() {
            for (int spins = 0; arrived.get() < 2; spins++) {
                if (spins < 20_000) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
            }
        }

        /** Runs {@code onHelper} on the helper thread and {@code onCaller} here, at once. */
        void race(Runnable onHelper, Runnable onCaller) {
            race(onHelper, onCaller, 0);
        }

        /**
         * Runs {@code onHelper} on the helper thread and {@code onCaller} here, the helper's side
         * delayed by {@code helperDelay} spin-wait steps (the caller's if negative); varying the
         * delay over rounds sweeps the window in which the two meet when one side takes much longer
         * than the other.
         */
        void race(Runnable onHelper, Runnable onCaller, int helperDelay) {
            raceNow(delayed(onHelper, helperDelay), delayed(onCaller, -helperDelay));
        }

        private static Runnable delayed(Runnable action, int delay) {
            if (delay <= 0) {
                return action;
            }
            return () -> {
                for (int i = 0; i < delay * 64; i++) {
                    Thread.onSpinWait();
                }
                action.run();
            };
        }

        private void raceNow(Runnable onHelper, Runnable onCaller) {
            arrived.set(0);
            done = false;
            task.set(onHelper);
            arrived.incrementAndGet();
            awaitBoth();
            onCaller.run();
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (!done) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the helper's side of the race did not finish");
                }
                Thread.yield();
            }
            Throwable t = failure.getAndSet(null);
            if (t != null) {
                throw new AssertionError("the helper's side of the race failed", t);
            }
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static String describeStack(Thread thread) {
        StringBuilder sb = new StringBuilder(thread.getState().toString());
        for (StackTraceElement e : thread.getStackTrace()) {
            sb.append("\n\tat ").append(e);
        }
        return sb.toString();
    }

    /** Waits, bounded, until {@code mutex} has {@code n} waiters queued. */
    static void awaitQueued(AsyncMutex mutex, int n) {
        eventually().until(() -> mutex.queueLength() == n);
    }

    /** Waits, bounded, until {@code semaphore} has {@code n} requests queued. */
    static void awaitQueued(AsyncSemaphore semaphore, int n) {
        eventually().until(() -> semaphore.queueLength() == n);
    }

    /** {@return {@code stage} as a future, asserting it is still waiting} */
    static CompletableFuture<Guard> waiting(CompletionStage<Guard> stage) {
        CompletableFuture<Guard> future = stage.toCompletableFuture();
        assertFalse(future.isDone(), () -> "expected a waiting acquire, was " + future);
        return future;
    }

    /** {@return the guard {@code stage} was granted with}, asserting it completed normally. */
    static Guard granted(CompletionStage<Guard> stage) {
        CompletableFuture<Guard> future = stage.toCompletableFuture();
        assertTrue(future.isDone(), () -> "expected a granted acquire, was " + future);
        assertFalse(future.isCompletedExceptionally(), () -> "expected a granted acquire, was " + future);
        return future.join();
    }

    /** Asserts {@code future} ended cancelled or failed, never with a guard. */
    static void notGranted(CompletableFuture<Guard> future) {
        assertTrue(future.isDone(), () -> "expected a settled acquire, was " + future);
        if (!future.isCompletedExceptionally()) {
            fail("expected a cancelled or failed acquire, was granted: " + future);
        }
    }

    /** Asserts the mutex is free and empty, and that a newcomer can take it. */
    static void assertFreeAndUsable(AsyncMutex mutex) {
        assertFalse(mutex.isLocked(), () -> "mutex should be free: " + mutex);
        assertEquals(0, mutex.queueLength(), () -> "queue should be empty: " + mutex);
        assertTrue(mutex.tryLock(), () -> "a newcomer should take a free mutex: " + mutex);
        mutex.unlock();
    }

    /** Asserts the semaphore holds exactly {@code permits} and nobody waits. */
    static void assertPermits(AsyncSemaphore semaphore, int permits) {
        assertEquals(0, semaphore.queueLength(), () -> "queue should be empty: " + semaphore);
        assertEquals(permits, semaphore.availablePermits(), () -> "permits: " + semaphore);
    }
}
