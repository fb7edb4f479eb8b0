package io.refpool.core.internal;

import java.util.concurrent.CompletableFuture;

/**
 * A key's slot while its object is being created (single flight): completes with the entry, with
 * {@code null} if nothing was made (no capacity), or with the factory's failure as its acquirers
 * see it.
 */
final class Creation<K, V> extends CompletableFuture<Entry<K, V>> implements Slot, Attempt {
    /** The thread running the factory; a synchronous acquire of the key there would wait for itself. */
    final Thread creator;

    Creation(Thread creator) {
        this.creator = creator;
    }
}
