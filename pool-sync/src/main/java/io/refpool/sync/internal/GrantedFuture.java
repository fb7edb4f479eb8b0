package io.refpool.sync.internal;

import io.refpool.sync.Guard;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A future completed with the guard of a grant, as a stage's {@code toCompletableFuture()} returns
 * it: {@code obtrude...} is refused, as on a granted {@link Waiter}, because forcing another value
 * into it would hide an ownership that must still be released; {@code complete...} returns
 * {@code false} as on any completed future.
 */
final class GrantedFuture extends CompletableFuture<Guard> {
    /** The lock, named in the message of a refused {@code obtrude...}. */
    private final WaiterQueue queue;

    GrantedFuture(Guard guard, WaiterQueue queue) {
        this.queue = queue;
        super.complete(guard);
    }

    @Override
    public void obtrudeValue(Guard value) {
        throw refused("a value");
    }

    @Override
    public void obtrudeException(Throwable ex) {
        Objects.requireNonNull(ex, "ex");
        throw refused("an exception");
    }

    private IllegalStateException refused(String what) {
        return new IllegalStateException("cannot obtrude " + what + " on the acquire of " + queue.describe()
                + ": the lock was already granted to this future; close its guard instead");
    }
}
