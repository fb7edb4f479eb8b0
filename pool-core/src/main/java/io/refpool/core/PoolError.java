package io.refpool.core;

import java.util.Objects;

/**
 * Something that went wrong inside a pool without a caller to throw it to: a failing factory or
 * disposer, a leaked handle, a handle closed twice ({@link LeakDetection#PARANOID}), handles still
 * open when the pool closed.
 *
 * <pre>{@code
 * RefPool<String, Session> pool = RefPool.builder((String tenant) -> engine.open(tenant))
 *         .errorListener(error -> log.warn(error.message(), error.cause()))
 *         .build();
 * }</pre>
 *
 * <p>{@link #cause()} is the exception thrown, or, for handle reports, a throwable whose stack trace
 * is the site that acquired (or first closed) the handle, when that site was recorded.
 *
 * @param kind what went wrong
 * @param key the key concerned, or {@code null}
 * @param message a sentence for a log
 * @param cause the exception thrown or the recorded site, or {@code null}
 */
public record PoolError(Kind kind, Object key, String message, Throwable cause) {
    /**
     * What went wrong.
     *
     * <pre>{@code
     * RefPool<String, Session> sessions = RefPool.builder(engine::open)
     *         .errorListener(error -> {
     *             if (error.kind() == PoolError.Kind.HANDLE_LEAKED) {
     *                 log.warn("a handle of " + error.key() + " leaked", error.cause());
     *             }
     *         })
     *         .build();
     * }</pre>
     */
    public enum Kind {
        /** The factory threw or returned an unusable object; the caller got the exception too. */
        FACTORY_FAILED,
        /** The disposer threw; the object counts as disposed and the drain went on. */
        DISPOSER_FAILED,
        /** A handle became unreachable while open; its reference was released for it. */
        HANDLE_LEAKED,
        /** A handle was closed again; the second close did nothing. */
        HANDLE_CLOSED_TWICE,
        /**
         * Handles were still open when the pool closed. Each object is disposed when its last handle
         * closes; a handle that is never closed keeps its object until the leak detector, if on,
         * finds the handle unreachable (with {@link LeakDetection#OFF}, for ever).
         */
        HANDLES_OPEN_AT_CLOSE,
        /**
         * The pool's executor rejected a drain (it was shut down, say); the drain ran on the thread
         * that scheduled it instead, so no release was left behind.
         */
        DRAINER_REJECTED,
        /**
         * The pool's call executor rejected or failed to take a {@code callAsync} function (an
         * {@code Error} too); the function ran on a new thread of the pool's own.
         */
        CALL_EXECUTOR_FAILED,
        /**
         * The pool's executor failed to take a drain with something other than a rejection (an
         * {@code Error} such as "unable to create native thread", say), or a drain failed; the drain
         * ran on the thread that scheduled it, without waiting for the gate, and the drainer stays
         * armed.
         */
        DRAINER_FAILED,
        /**
         * The idle cache threw while taking an object (its weigher, or the key's {@code hashCode});
         * the object was disposed instead of idled.
         */
        IDLE_CACHE_FAILED,
        /** Failing the pool's waiters at close threw (a waiter's callback); the close went on. */
        CLOSE_CANCELLATION_FAILED,
        /**
         * A reference was released that nobody held (a count already at zero, or disposed): a
         * defect of the pool, never of its caller; the release was not applied.
         */
        REFCOUNT_DOUBLE_RELEASE,
        /** The pool's {@link Interrupter} threw; the object was retired. */
        INTERRUPTER_FAILED,
        /**
         * A {@link SectionHooks} hook threw. From {@code enter}: the section was left free and the
         * caller got the exception too; from {@code leave}: the section was released anyway.
         */
        SECTION_HOOK_FAILED,
        /**
         * A handle, or a {@code call}'s function, was still open past the pool's
         * {@linkplain RefPool.Builder#heldTooLong held-too-long threshold}; reported once, with the
         * site that acquired it as the cause. Nothing is done to it.
         */
        HELD_TOO_LONG,
        /**
         * The validator threw while checking an idle object (which was then disposed as {@link
         * DisposalCause#FAILED_VALIDATION}), or the ticker threw while the pool read an object's
         * age (the object was kept) or timed a new one (before its factory ran: nothing was made,
         * and the caller got the exception too).
         */
        REVIVE_CHECK_FAILED,
        /**
         * A thread ended with an attachment open (or lost it: its thread-locals were cleared while
         * it was attached, which is seen once the thread uses the pool again or ends): its hold of
         * the pool's gate is never given back, so {@code
         * stopTheWorld()} and the pool's close wait for it for ever (a bounded {@code
         * close(Duration)} returns {@code false}), and in {@link AttachMode#GLOBAL} mode every attach
         * does. Reported once per thread, when a close starts, when a bounded close reaches its
         * limit, or when a timed wait (an attach, a {@code stopTheWorld()}, an acquire or a call with
         * a limit) times out; the message names the thread.
         */
        THREAD_ENDED_ATTACHED
    }

    /**
     * Creates a report.
     *
     * @param kind what went wrong
     * @param key the key concerned, or {@code null}
     * @param message a sentence for a log
     * @param cause the exception thrown or the recorded site, or {@code null}
     */
    public PoolError {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public String toString() {
        return kind + ": " + message;
    }
}
