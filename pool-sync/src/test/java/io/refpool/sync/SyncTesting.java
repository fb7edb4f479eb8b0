package io.refpool.sync;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.sync.internal.WaiterQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Helpers of the lock tests: the queue behind a lock, a two-sided racer, future outcomes. */
final class SyncTesting {
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

    /**
     * {@return the helper's delay for {@code round} of {@code run}, in {@link Racer} steps}: a sweep
     * across zero, 64 steps wide in the first run and four times wider in each later one, so a run
     * in which one side always won gives the other a longer head start
     */
    static int skew(int round, int run) {
        int width = 64 << (2 * run);
        return round % width - width / 2;
    }

    /** Spins for about {@code nanos} without parking, so a timer racing the caller is not outrun by a wake-up. */
    static void spinFor(long nanos) {
        long start = System.nanoTime();
        while (System.nanoTime() - start < nanos) {
            Thread.onSpinWait();
        }
    }
}
