package io.refpool.core.internal;

/**
 * A pending release in the {@link ReleaseQueue}: a handle's decrement of an {@link Entry} closed
 * off-attachment, or an idle object the cache evicted.
 */
sealed interface Release permits Entry, Eviction {}
