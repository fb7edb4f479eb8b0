package io.refpool.core.internal;

/**
 * Test seam of {@link ReleaseQueue}: called at named points so a test can count lock acquisitions
 * or pause a releaser between its add and its flag store. Off ({@code null}) by default, and
 * installable only where the build turns the seams on ({@link TestSeams}).
 */
@FunctionalInterface
public interface ReleaseQueueHooks {
    /** The named points. */
    enum Point {
        /** The queue lock is about to be taken (every taking, enqueue or drain). */
        QUEUE_LOCK,
        /** An enqueue added its item and released the lock; the dirty flag is not raised yet. */
        BETWEEN_ADD_AND_FLAG
    }

    /**
     * Called at {@code point} on the thread passing it.
     *
     * @param point where the thread is
     */
    void at(Point point);
}
