package io.refpool.core.internal;

/**
 * Test seam of the pool: called at named points so a test can hold one thread inside a race window
 * while another acts. Installable only where the build turns the seams on ({@link TestSeams}); a
 * point then costs nothing otherwise, and one volatile read with no hook installed.
 */
@FunctionalInterface
public interface PoolHooks {
    /** The named points. */
    enum Point {
        /** The eviction listener queued an eviction; Caffeine still holds the entry. */
        EVICTION_QUEUED,
        /** A release moved the object's count to 0 and has not yet decided its fate. */
        REACHED_ZERO,
        /** A release found the object at count 0 and is about to idle it (a cache put if the cache needs one). */
        BEFORE_IDLE_PUT,
        /** A put into the idle cache is about to mark the object cached and insert it. */
        BEFORE_CACHE_PUT,
        /** A put into the idle cache inserted the object and has not yet read its count again. */
        AFTER_CACHE_INSERT,
        /** A release idled the object in the cache and has not yet looked for capacity waiters. */
        AFTER_IDLE_PUT,
        /** An acquireAsync needs a permit and has not yet joined the line for capacity. */
        CAPACITY_JOINING,
        /**
         * An acquireAsync joined the line for capacity and has not yet looked at its key again nor
         * reclaimed idle objects.
         */
        CAPACITY_QUEUED,
        /** attachAsync found the pool open and has not yet tried the gate. */
        ATTACH_ASYNC_CHECKED,
        /**
         * A call's run is registered with its timer, token and the bounded close, and its function
         * has not started: a stop from here on fails the call without calling the interrupter
         * (only reached with an interrupter set).
         */
        FUNCTION_STARTING,
        /**
         * A call's function returned or threw, and the pool has marked it so: from here on its
         * interrupter is never called (only reached with an interrupter set).
         */
        FUNCTION_RETURNED,
        /** An acquire claimed an idle object for its revive check and has not yet checked it. */
        REVIVE_CLAIMED,
        /**
         * A disposed object's disposer returned and the object left its key's slot; its retirement
         * is not yet complete (the key's waiters for it not yet woken).
         */
        SLOT_FREED,
        /** {@code Handle.share()} found its handle open and has not yet taken the new reference. */
        SHARE_CHECKED,
        /** {@code Handle.section()} or {@code sectionAsync()} found its handle open and has not yet taken its reference. */
        SECTION_CHECKED,
        /**
         * An {@code acquireAsync} took a reference to its key's live object at once and has not
         * yet checked whether the object was retired meanwhile.
         */
        ASYNC_RETAINED,
        /**
         * An acquire's reference is about to become its thread's new lease: room is made in the
         * thread's table, and the object not yet checked retired under its list of leases.
         */
        LEASE_MAKING,
        /** A sweep listed an object's leases and has not yet ended any of them. */
        SWEEP_LISTED,
        /**
         * A creation short of capacity, or {@code clearIdle}, found leases the sweeper's thread ended
         * and has not queued yet, and waits for them.
         */
        SWEEP_AWAITED
    }

    /**
     * Called at {@code point} on the thread passing it.
     *
     * @param point where the thread is
     */
    void at(Point point);
}
