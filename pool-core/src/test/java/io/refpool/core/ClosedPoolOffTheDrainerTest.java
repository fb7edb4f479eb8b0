package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two consequences of keeping a pool's work off the drainer threads every pool shares: the watch
 * of a drain handed to the executor, whose timer holds the pool, waits at most a second, so a
 * closed pool with a long drain delay goes; and a timed async call a disposer makes on a drainer
 * thread is timed as from any thread, so a zero limit with everything free runs its function.
 */
class ClosedPoolOffTheDrainerTest {
    private static WeakReference<?> closedPoolWithAHandleClosedAfterTheClose() throws Exception {
        CountDownLatch disposed = new CountDownLatch(1);
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .disposer(sb -> disposed.countDown())
                .drainDelay(Duration.ofHours(1))
                .build();
        Handle<StringBuilder> h = pool.attached(() -> pool.acquire("tenant-7"));
        pool.close();
        h.close(); // after the close, detached: a drain handed to the executor at once, and watched
        assertTrue(disposed.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        return new WeakReference<>(pool.core());
    }

    @Test
    void aClosedPoolIsNotKeptAnHourByTheWatchOfItsLastDrain() throws Exception {
        WeakReference<?> ref = closedPoolWithAHandleClosedAfterTheClose();
        eventually().until(() -> {
            System.gc();
            return ref.get() == null;
        });
    }

    private static Object outcome(CompletableFuture<?> call, long millis) throws Exception {
        try {
            return call.get(millis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    /**
     * A disposer on a drainer thread calls {@code callAsync(fresh, ZERO, fn)}: the key's factory
     * returns only after that call returned, on a call thread; nothing was busy.
     */
    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void aZeroLimitCallAsyncFromADisposerRunsItsFunction(AttachMode mode) throws Exception {
        LinkedBlockingQueue<Runnable> queued = new LinkedBlockingQueue<>();
        CountDownLatch returned = new CountDownLatch(1);
        AtomicReference<CompletableFuture<Object>> fromDisposer = new AtomicReference<>();
        AtomicReference<String> disposerThread = new AtomicReference<>();
        AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> {
                    if (key.equals("fresh")) {
                        returned.await(BOUND.toMillis(), TimeUnit.MILLISECONDS); // after callAsync returned
                    }
                    return new Object();
                })
                .disposer((key, object, cause) -> {
                    if (key.equals("old")) {
                        disposerThread.set(Thread.currentThread().getName());
                        fromDisposer.set(self.get()
                                .callAsync("fresh", Duration.ZERO, engine -> (Object) "ran")
                                .toCompletableFuture());
                        returned.countDown();
                    }
                })
                .attachMode(mode)
                .callExecutor(queued::add)
                .drainDelay(Duration.ofMillis(10))
                .build();
        self.set(pool);
        pool.attached(() -> pool.acquire("old")).close(); // a drain on a shared drainer disposes it
        assertTrue(returned.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(disposerThread.get().startsWith("refpool-drainer-"), disposerThread.get());
        CompletableFuture<Object> call = fromDisposer.get();
        Runnable function = queued.poll(BOUND.toMillis(), TimeUnit.MILLISECONDS); // handed over: all granted
        Thread worker = new Thread(function, "call-executor");
        worker.start();
        worker.join();
        Object outcome;
        try {
            outcome = outcome(call, BOUND.toMillis());
        } catch (TimeoutException notSettled) {
            outcome = notSettled;
        }
        pool.close();
        assertEquals("ran", outcome);
    }
}
