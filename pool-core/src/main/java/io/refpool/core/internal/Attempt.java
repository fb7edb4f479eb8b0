package io.refpool.core.internal;

import io.refpool.sync.Guard;

/**
 * What one attached attempt to acquire a key came to: the object's entry, with a reference
 * taken for the caller, a creation (another thread's) to wait for, or the need for a capacity permit it could not get.
 */
sealed interface Attempt permits Entry, Creation, Attempt.NeedsCapacity, Attempt.Refused, Attempt.LookAgain {
    /** A new object was needed and no capacity permit could be had. */
    enum NeedsCapacity implements Attempt {
        INSTANCE
    }

    /**
     * A revive check refused the idle object it claimed and disposed it; the object's capacity
     * permit ({@code null} when unbounded) is kept for the key's new object, never handed to the
     * line, so the request that revived it gets a new one. {@code successor} is the creation that
     * took the disposed object's slot before the key's waiters were let go, or {@code null} if the
     * slot no longer held the object.
     */
    record Refused(Guard permit, Creation<?, ?> successor) implements Attempt {}

    /**
     * Inside {@code SlotTable.attempt} only, never its answer: the object's count moved while its
     * revive was tried, so the attempt looks at the key's slot again.
     */
    enum LookAgain implements Attempt {
        INSTANCE
    }
}
