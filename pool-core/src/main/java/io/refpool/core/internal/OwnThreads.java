package io.refpool.core.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Starts pool work on a daemon thread of its own, for work that must not run on the thread at hand
 * (one inside a factory, or nested in an attachment) and that has no executor left to take it.
 */
final class OwnThreads {
    private static final AtomicInteger STARTED = new AtomicInteger();

    private OwnThreads() {}

    /**
     * Starts {@code work} on a new daemon thread named after {@code what} and the pool. What starting
     * a thread throws ({@link OutOfMemoryError} when none can be made) reaches the caller, and
     * {@code work} then never runs.
     */
    static void start(String what, String poolName, Runnable work) {
        Thread thread =
                new Thread(work, "refpool-" + what + "-" + STARTED.incrementAndGet() + " (pool '" + poolName + "')");
        thread.setDaemon(true);
        thread.start();
    }
}
