package io.refpool.core.internal;

import io.refpool.core.PoolClosedException;
import io.refpool.sync.CancellationToken;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * {@code pool.warmUp(keys, token)}: creates the objects of keys that have none, on the pool's
 * executor, one key at a time, and lets each go idle at once.
 *
 * <p>A key's slot is claimed and its object made with no gate held ({@link SlotTable#claim}, {@link
 * SlotTable#make}), so a warm-up holds no gate during a factory, in any mode. Only publishing the
 * object and letting it go idle is attached, and that never parks the executor's thread: if the
 * gate is taken, the thread that gives it up does it ({@link Run}). A thread of the executor that
 * {@code callAsync} also needs (one single-thread executor for both) is thus never held waiting
 * for a call that holds the gate. A key that has an object (live, idle, or being created) is
 * skipped. Only a free permit is used: a warm-up never disposes an idle object to make room, never
 * waits in line for capacity, and stops when none is free. The token is read before each key; a
 * cancelled warm-up completes with what it made.
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
            executor.execute(new Run(copy, token, result));
        } catch (Throwable rejected) {
            result.completeExceptionally(rejected);
        }
        return result;
    }

    /**
     * One warm-up: its keys in order, on the executor. Each key's object is made where the thread
     * holds no gate, then published attached through {@link Attacher#whenAttached}: at once if the
     * gate is free, otherwise by the thread that gives it up, after which the warm-up goes on from
     * the next key on the executor again. So the executor's thread never waits for the gate.
     */
    private final class Run implements Runnable {
        private final List<K> keys;
        private final CancellationToken token;
        private final CompletableFuture<Integer> result;
        /** The index of the next key, and how many objects were made; handed on with the task. */
        private int next;

        private int made;

        Run(List<K> keys, CancellationToken token, CompletableFuture<Integer> result) {
            this.keys = keys;
            this.token = token;
            this.result = result;
        }

        @Override
        public void run() {
            try {
                while (next < keys.size()) {
                    if (token.isCancellationRequested()) {
                        break;
                    }
                    if (pool.isClosed()) {
                        throw new PoolClosedException("pool '" + pool.name() + "' closed during warmUp(keys), after "
                                + made + " object(s) were made");
                    }
                    K key = keys.get(next++);
                    if (slots.occupied(key)) {
                        continue;
                    }
                    AttachState s = attacher.state();
                    Object claimed = slots.claim(key, s);
                    if (claimed == null) {
                        continue; // the key has an object or a creation now
                    }
                    if (claimed == Attempt.NeedsCapacity.INSTANCE) {
                        break; // no free capacity: stop rather than wait or evict
                    }
                    @SuppressWarnings("unchecked")
                    SlotTable.Claim<K, V> claim = (SlotTable.Claim<K, V>) claimed;
                    if (!publish(claim, slots.make(claim, s))) {
                        return; // goes on from the next key once published
                    }
                    made++;
                }
                result.complete(made);
            } catch (Throwable failed) {
                result.completeExceptionally(failed);
            }
        }

        /**
         * Publishes a made object and lets it go idle (disposed as CLOSED if the pool closed
         * meanwhile), attached.
         *
         * @return true if that is done, false if it waits for the gate: the warm-up then goes on
         *     from the next key on the executor once it is done
         */
        private boolean publish(SlotTable.Claim<K, V> claim, Entry<K, V> entry) {
            CompletableFuture<Void> published = attacher.whenAttached(s -> {
                        slots.publish(claim, entry, s);
                        handles.releaseAttached(entry, s); // count 0: idle
                    })
                    .toCompletableFuture();
            if (published.isDone()) { // ran at once (a failure was thrown), or already granted and run
                Throwable failed = published.handle((done, failure) -> failure).join();
                if (failed != null) {
                    throw SlotTable.unchecked(Waits.unwrapped(failed));
                }
                return true;
            }
            // on the thread that gave the gate up, once it has left the gate again
            published.whenComplete((done, failed) -> {
                if (failed != null) {
                    result.completeExceptionally(Waits.unwrapped(failed));
                    return;
                }
                made++;
                try {
                    executor.execute(this);
                } catch (Throwable rejected) {
                    result.completeExceptionally(rejected);
                }
            });
            return false;
        }
    }
}
