package io.refpool.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The default executor of pool drainers: daemon threads created on demand and retired after a
 * minute idle. A drainer attaches, which can wait for the gate, so it gets a thread of its own rather
 * than a common-pool worker.
 */
final class DrainerThreads {
    private static final Executor SHARED = create();

    private DrainerThreads() {}

    static Executor shared() {
        return SHARED;
    }

    /** {@return whether {@code thread} is one of these drainer threads} (a user executor's are left alone) */
    static boolean owns(Thread thread) {
        return thread instanceof DrainerThread;
    }

    /** A drainer thread: the type tells it from any thread of a user's executor. */
    private static final class DrainerThread extends Thread {
        DrainerThread(Runnable runnable, String name) {
            super(null, runnable, name, 0, false);
            OwnThreads.inheritNothing(this);
        }
    }

    private static Executor create() {
        AtomicInteger serial = new AtomicInteger();
        ThreadPoolExecutor executor = new ThreadPoolExecutor(
                4,
                4,
                60,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                runnable -> new DrainerThread(runnable, "refpool-drainer-" + serial.incrementAndGet()));
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }
}
