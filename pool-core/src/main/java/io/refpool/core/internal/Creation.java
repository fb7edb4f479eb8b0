package io.refpool.core.internal;

import java.util.concurrent.CompletableFuture;

/**
 * What an acquirer of a key waits for before it may look again: the key's object being created
 * (single flight), or being disposed ({@linkplain Entry#retirement its retirement}: a key's next
 * object is created only once its predecessor's disposer has returned). Completes with the entry,
 * with {@code null} if nothing was made (no capacity, or the disposal is over: look again), or with
 * the factory's failure as its acquirers see it.
 */
final class Creation<K, V> extends CompletableFuture<Entry<K, V>> implements Slot, Attempt {
    /** Whether this is a disposal under way rather than a creation. */
    final boolean retirement;

    /**
     * The thread running the factory, or the disposal; a synchronous acquire of the key there would
     * wait for itself. A retirement's is set by the thread that claims the disposal.
     */
    volatile Thread runner;

    /**
     * Whether its factory runs with the creator's attachment suspended ({@code SlotTable.create}), so
     * that taking the gate does not wait for it: {@code close()} waits for it explicitly.
     */
    final boolean gateFree;

    Creation(Thread runner, boolean retirement) {
        this(runner, retirement, false);
    }

    Creation(Thread runner, boolean retirement, boolean gateFree) {
        this.runner = runner;
        this.retirement = retirement;
        this.gateFree = gateFree;
    }
}
