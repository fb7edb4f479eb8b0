package io.refpool.core.internal;

/**
 * What one attached attempt to acquire a key came to: the object's entry, with a reference
 * taken for the caller, a creation (another thread's) to wait for, or the need for a capacity permit it could not get.
 */
sealed interface Attempt permits Entry, Creation, Attempt.NeedsCapacity {
    /** A new object was needed and no capacity permit could be had. */
    enum NeedsCapacity implements Attempt {
        INSTANCE
    }
}
