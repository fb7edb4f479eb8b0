package io.refpool.sync.internal;

/**
 * Test seam of {@link WaiterQueue}: called at named points of the contended paths so a test can
 * pause a thread there (with a latch) or fail it, forcing one interleaving. Off ({@code null}) by
 * default; the uncontended paths never look at it.
 */
@FunctionalInterface
public interface QueueHooks {
    /** The named points, in the order a contended acquire or release passes them. */
    enum Point {
        /** The fast-path CAS failed; no waiter exists yet. Throwing here changes nothing. */
        AFTER_FAST_PATH_FAILED,
        /** About to allocate the waiter; throwing here models a failed allocation. */
        WAITER_ALLOCATION,
        /** The waiter is allocated; the queue lock is not taken yet. */
        AFTER_WAITER_ALLOCATED,
        /** Under the queue lock, the locked recheck failed; the waiter is about to be linked. */
        BEFORE_PUBLICATION,
        /** A release popped a waiter for a grant and left the queue lock; the grant CAS is next. */
        BETWEEN_POP_AND_COMPLETION,
        /** A cancel won its waiter's CAS and has not yet taken the queue lock to hand back what it held. */
        CANCEL_WON,
        /** A queued blocking waiter stopped spinning and has not yet published that it parks. */
        BEFORE_PARKED_FLAG,
        /**
         * A queued blocking waiter published that it parks, read its phase as still waiting, and
         * is about to park for the first time.
         */
        BEFORE_PARK
    }

    /**
     * Called at {@code point} on the thread passing it.
     *
     * @param point where the thread is
     */
    void at(Point point);
}
