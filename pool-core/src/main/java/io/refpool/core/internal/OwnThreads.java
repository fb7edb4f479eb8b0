package io.refpool.core.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
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
        daemon(work, "refpool-" + what + "-" + STARTED.incrementAndGet() + " (pool '" + poolName + "')")
                .start();
    }

    /**
     * {@return a daemon thread for {@code work}, not started, that inherits nothing of the thread
     * that makes it}: no inheritable thread-locals, and refpool's class loader as its context class
     * loader. A plugin thread may be the one that happens to start a thread every pool then shares;
     * inheriting its loader, the thread would keep the plugin from being unloaded as long as it runs.
     */
    static Thread daemon(Runnable work, String name) {
        Thread thread = new Thread(null, work, name, 0, false);
        inheritNothing(thread);
        return thread;
    }

    /** Makes a thread made with {@code inheritThreadLocals} false a daemon with refpool's context class loader. */
    static void inheritNothing(Thread thread) {
        thread.setDaemon(true);
        thread.setContextClassLoader(OwnThreads.class.getClassLoader());
    }

    /**
     * Runs what a passed time limit sets off (the interrupt of {@code RunControl} and {@code
     * AsyncCalls}, the end of a timed wait, {@link Waits#arm}) on threads of the pool's own, known
     * as interrupter threads, so an interrupter that takes long, or a factory a timed-out wait lets
     * run, delays no other timer. Its threads are daemons, reused, and end after a minute idle, so a
     * storm of limits passing at once costs a few threads, not one each. What handing the work over
     * throws ({@link OutOfMemoryError} when no thread can be made) reaches the caller, and
     * {@code work} then never runs.
     */
    static void interrupt(Runnable work) {
        Interrupters.EXECUTOR.execute(work);
    }

    /**
     * {@return the default call executor}: a thread for each {@code callAsync} function that finds
     * none idle, daemons, reused, ended after a minute idle, shared by every pool. A function queued
     * there holds its attachment and its section while it waits for a thread; on an executor with a
     * bound (the common fork-join pool has one thread on a two-core machine) a function running that
     * waits for what a queued one holds (a nested {@code call} of its key, the gate taken back in
     * line) would wait for ever, so the default has none.
     */
    static Executor calls() {
        return Calls.EXECUTOR;
    }

    /** Lazy holder: the executor exists once a limit has passed with a function running. */
    private static final class Interrupters {
        static final ThreadPoolExecutor EXECUTOR = cached("refpool-interrupter-");
    }

    /** Lazy holder: the executor exists once a pool without a call executor of its own ran a {@code callAsync}. */
    private static final class Calls {
        static final ThreadPoolExecutor EXECUTOR = cached("refpool-call-");
    }

    /**
     * {@return an executor of daemon threads named {@code prefix} and a number, made as needed and
     * ended after a minute idle}: shared by every pool and reused, they inherit no thread-locals and
     * no context class loader of whichever thread (the timer's, a caller's) happened to start them
     */
    private static ThreadPoolExecutor cached(String prefix) {
        return new ThreadPoolExecutor(
                0,
                Integer.MAX_VALUE,
                60,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                work -> daemon(work, prefix + STARTED.incrementAndGet()));
    }
}
