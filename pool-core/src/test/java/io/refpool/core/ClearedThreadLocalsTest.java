package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.Callable;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A pool thread that clears its thread-locals between tasks (the common fork-join pool does on
 * current JDKs) gets a new attach state in its next task, while a handle it opened in an earlier task
 * still remembers the old one. The handle must not take the old, detached state for the thread's:
 * under strict access {@code get()} would be refused inside an attachment, and an attached close
 * would be deferred as if off-attachment.
 */
class ClearedThreadLocalsTest {
    private static final ThreadLocal<String> PROBE = new ThreadLocal<>();

    @Test
    void aHandleOpenedInAnEarlierTaskOfAThreadThatClearedItsThreadLocalsSeesTheThreadAttached() throws Exception {
        try (RefPool<String, StringBuilder> pool = RefPool.builder((String key) -> new StringBuilder(key))
                .attachMode(AttachMode.SHARED) // attached is enough to use an object: no section involved
                .strictAccess(true)
                .build()) {
            // task 1: open a handle attached, then detach; the handle stays open
            Thread[] worker = new Thread[1];
            Handle<StringBuilder> handle = onCommonPool(() -> {
                worker[0] = Thread.currentThread();
                PROBE.set("set in an earlier task");
                try (Attachment attachment = pool.attach()) {
                    return pool.acquire("k");
                }
            });
            // task 2, on the same worker, its thread-locals cleared: attached, the handle serves it
            // and its close is applied at once
            Integer liveAfterClose = onWorker(worker[0], () -> {
                if (PROBE.get() != null) { // this JDK's common pool keeps thread-locals between tasks
                    pool.attached(() -> {
                        handle.close();
                        return null;
                    });
                    return null;
                }
                return pool.attached(() -> {
                    assertEquals("k", handle.get().toString());
                    handle.close();
                    return (int) pool.stats().live();
                });
            });
            assumeTrue(liveAfterClose != null, "the common pool kept the worker's thread-locals");
            assertEquals(0, liveAfterClose, "an attached close is applied at once, not deferred");
        }
    }

    private static <T> T onCommonPool(Callable<T> task) throws Exception {
        return ForkJoinPool.commonPool().submit(task).get(10, TimeUnit.SECONDS);
    }

    /** Runs {@code task} in a new top-level task of the common pool on {@code worker}; skips if none lands there. */
    private static <T> T onWorker(Thread worker, Callable<T> task) throws Exception {
        for (int attempt = 0; attempt < 200; attempt++) {
            Object[] outcome = onCommonPool(() -> Thread.currentThread() == worker ? new Object[] {task.call()} : null);
            if (outcome != null) {
                @SuppressWarnings("unchecked")
                T value = (T) outcome[0];
                return value;
            }
        }
        assumeTrue(false, "no task of the common pool ran on " + worker.getName());
        return null;
    }
}
