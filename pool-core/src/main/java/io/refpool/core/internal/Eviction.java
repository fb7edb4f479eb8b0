package io.refpool.core.internal;

import io.refpool.core.EvictionCause;

/**
 * A deferred disposal of an idle object the cache evicted.
 *
 * @param entry the evicted object's entry
 * @param cause why the cache evicted it
 * @param spell the idle spell the eviction listener saw; a drain disposes the object only if it is
 *     still in that spell ({@link Entry#idleSpell()})
 */
record Eviction<K, V>(Entry<K, V> entry, EvictionCause cause, int spell) implements Release {}
