package io.refpool.core.internal;

import io.refpool.core.Attachment;
import io.refpool.core.PoolClosedException;
import io.refpool.sync.CancellationToken;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * {@code pool.warmUp(keys, token)}: creates the objects of keys that have none, on the pool's
 * executor, one key at a time, and lets each go idle at once.
 *
 * <p>Each key is one short attach, suspended while the factory runs ({@link SlotTable#warm}), so a
 * warm-up holds no gate during a factory in any mode, and none between keys. A key that
 * has an object (live, idle, or being created) is skipped. Only a free permit is used: a warm-up
 * never disposes an idle object to make room, never waits in line for capacity, and stops when none
 * is free. The token is read before each key and ends a wait for the gate; a cancelled warm-up
 * completes with what it made.
 */
final class Warmer<K, V> {
    private final PoolState pool;
    private final Attacher<K, V> attacher;
    private final SlotTable<K, V> slots;
    private final Handles<K, V> handles;
    private final Executor executor;
    private final boolean cached;

    Warmer(
            PoolState pool,
            Attacher<K, V> attacher,
            SlotTable<K, V> slots,
            Handles<K, V> handles,
            Executor executor,
            boolean cached) {
        this.pool = pool;
        this.attacher = attacher;
        this.slots = slots;
        this.handles = handles;
        this.executor = executor;
        this.cached = cached;
    }

    /** {@code pool.warmUp}: checks its arguments at the call, then warms up on the executor. */
    CompletionStage<Integer> warmUp(Collection<? extends K> keys, CancellationToken token) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(token, "token");
        List<K> copy = new ArrayList<>(keys);
        for (int i = 0; i < copy.size(); i++) {
            if (copy.get(i) == null) {
                throw new NullPointerException("warmUp(keys): the key at index " + i + " is null");
            }
        }
        if (!cached) {
            throw new IllegalStateException("warmUp(keys) on pool '" + pool.name()
                    + "', which has no idle cache: each object would be disposed as soon as it was made;"
                    + " configure one with idle(...)");
        }
        if (pool.isClosed()) {
            return CompletableFuture.failedFuture(new PoolClosedException(pool.onClosedPool("warmUp(keys)")));
        }
        CompletableFuture<Integer> result = new CompletableFuture<>();
        try {
            executor.execute(() -> run(copy, token, result));
        } catch (Throwable rejected) {
            result.completeExceptionally(rejected);
        }
        return result;
    }

    private void run(List<K> keys, CancellationToken token, CompletableFuture<Integer> result) {
        int made = 0;
        try {
            for (K key : keys) {
                if (token.isCancellationRequested()) {
                    break;
                }
                if (pool.isClosed()) {
                    throw new PoolClosedException("pool '" + pool.name() + "' closed during warmUp(keys), after " + made
                            + " object(s) were made");
                }
                if (slots.occupied(key)) {
                    continue;
                }
                Boolean createdOrFull;
                Attachment attached;
                try {
                    attached = attacher.attach(token, false, false); // the token ends a wait for the gate
                } catch (CancellationException cancelled) {
                    break;
                }
                try {
                    createdOrFull = warmOne(key, attacher.state());
                } finally {
                    attached.close();
                }
                if (createdOrFull == null) {
                    break; // no free capacity: stop rather than wait or evict
                }
                if (createdOrFull) {
                    made++;
                }
            }
            result.complete(made);
        } catch (Throwable failed) {
            result.completeExceptionally(failed);
        }
    }

    /** {@return true if it made the key's object and let it go idle, false if the key had one, null if no capacity} */
    private Boolean warmOne(K key, AttachState s) {
        Attempt attempt = slots.warm(key, s);
        if (attempt == null) {
            return Boolean.FALSE;
        }
        if (!(attempt instanceof Entry)) {
            return null;
        }
        @SuppressWarnings("unchecked")
        Entry<K, V> entry = (Entry<K, V>) attempt;
        handles.releaseAttached(entry, s); // count 0: idle (disposed as CLOSED if the pool closed meanwhile)
        return Boolean.TRUE;
    }
}
