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

    /** Whether this is the check of an idle object being revived (its validator), not a creation. */
    final boolean check;

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
        this(runner, retirement, false, false);
    }

    Creation(Thread runner, boolean retirement, boolean gateFree) {
        this(runner, retirement, gateFree, false);
    }

    private Creation(Thread runner, boolean retirement, boolean gateFree, boolean check) {
        this.runner = runner;
        this.retirement = retirement;
        this.gateFree = gateFree;
        this.check = check;
    }

    /** {@return the check of an idle object that the calling thread revives} */
    static <K, V> Creation<K, V> check() {
        return new Creation<>(Thread.currentThread(), false, false, true);
    }

    /** {@return what this is, for a message}: "creation", "disposal" or "check" */
    String what() {
        return retirement ? "disposal" : check ? "check" : "creation";
    }
}
