package io.refpool.sync;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Small helpers shared by the {@link AsyncSharedMutex} tests. */
final class SharedMutexTesting {

    private SharedMutexTesting() {}

    /** A piece of test code that may throw. */
    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    /** {@return the lock's whole state word} */
    static long state(AsyncSharedMutex lock) {
        return SyncTesting.queueOf(lock).state();
    }

    /** Asserts that nobody holds or waits for {@code lock}. */
    static void assertFree(AsyncSharedMutex lock) {
        assertFree(lock, "");
    }

    /** Asserts that nobody holds or waits for {@code lock}; {@code context} names the seed or round. */
    static void assertFree(AsyncSharedMutex lock, String context) {
        assertEquals(0, lock.readers(), () -> context + ": readers of " + lock);
        assertFalse(lock.isWriteLocked(), () -> context + ": writer of " + lock);
        assertEquals(0, lock.queueLength(), () -> context + ": queue of " + lock);
        assertEquals(0L, state(lock), () -> context + ": state word of " + lock);
    }

    /** Waits, within {@link #BOUND}, until exactly {@code n} acquires are queued on {@code lock}. */
    static void awaitQueueLength(AsyncSharedMutex lock, int n) {
        eventually().until(() -> lock.queueLength() == n);
    }

    /** {@return the stage as a future, for inspection} */
    static CompletableFuture<Guard> future(CompletionStage<Guard> stage) {
        return stage.toCompletableFuture();
    }

    /** {@return whether the stage completed normally (granted)} */
    static boolean granted(CompletionStage<Guard> stage) {
        CompletableFuture<Guard> f = future(stage);
        return f.isDone() && !f.isCompletedExceptionally();
    }

    /** {@return the guard of a stage that must already be granted} */
    static Guard guardOf(CompletionStage<Guard> stage) {
        CompletableFuture<Guard> f = future(stage);
        assertTrue(f.isDone(), () -> "expected a granted acquire, was " + f);
        return f.getNow(null);
    }

    /** {@return the guard of a stage, waiting for it within {@link #BOUND}} */
    static Guard awaitGuard(CompletionStage<Guard> stage)
            throws InterruptedException, ExecutionException, TimeoutException {
        return future(stage).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }
}
