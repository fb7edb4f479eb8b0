package io.refpool.core.internal;

import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Registration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code pool.warmUp(keys, token)}: creates the objects of keys that have none, on the builder's
 * executor if it set one, else on the library's call threads (never on the drainer threads every
 * pool shares, which a slow factory would hold from other pools' drains), one key at a time, and lets each go idle: before the stage completes if the gate is
 * free, otherwise when it is next given up.
 *
 * <p>A warm-up never waits for the gate ({@link #run}): it holds none during a factory, in any
 * mode, and a thread of the executor that {@code callAsync} also needs (one single-thread executor
 * for both) is never held waiting for a call that holds the gate. A key that has an object (live,
 * idle, or being created) is skipped. Only a free permit is used: a warm-up never disposes an idle
 * object to make room, never waits in line for capacity, and stops when none is free. The token is
 * read before each key; a cancelled warm-up completes with what it made.
 */
final class Warmer<K, V> {
    private final PoolState pool;
    /** Cancelled when the pool closes: fails a warm-up its executor has not started. */
    private final CancellationToken closing;

    private final Attacher<K, V> attacher;
    private final SlotTable<K, V> slots;
    private final Handles<K, V> handles;
    private final Executor executor;
    private final boolean cached;

    Warmer(
            PoolState pool,
            CancellationToken closing,
            Attacher<K, V> attacher,
            SlotTable<K, V> slots,
            Handles<K, V> handles,
            Executor executor,
            boolean cached) {
        this.pool = pool;
        this.closing = closing;
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
        // the task's run, the executor's failure or the pool's close: one decides
        AtomicBoolean claimed = new AtomicBoolean();
        Registration onClose = closing.register(() -> {
            if (claimed.compareAndSet(false, true)) { // an executor that dropped the task, or has not run it yet
                result.completeExceptionally(new PoolClosedException(
                        "pool '" + pool.name() + "' closed before its executor started warmUp(keys)"));
            }
        });
        try {
            executor.execute(() -> {
                onClose.close();
                if (claimed.compareAndSet(false, true)) {
                    run(copy, token, result);
                }
            });
        } catch (Throwable rejected) {
            onClose.close();
            if (claimed.compareAndSet(false, true)) { // an executor that took the task and then threw: it never runs
                result.completeExceptionally(rejected);
            } else {
                pool.report(
                        PoolError.Kind.DRAINER_FAILED,
                        null,
                        "the executor of pool '" + pool.name() + "' ran warmUp(keys) and then threw",
                        rejected);
            }
        }
        return result;
    }

    /**
     * One warm-up: its keys in order, on the executor, never waiting for the gate. Each key's
     * object is made and published with no gate held ({@link SlotTable#warm}); the warm-up's
     * reference to it is then released as any handle closed off the attachment is, and applied, at
     * the end, by an attach that never parks ({@link Attacher#runInternal}): at once if the gate is
     * free, otherwise by the thread that gives it up.
     */
    private void run(List<K> keys, CancellationToken token, CompletableFuture<Integer> result) {
        int made = 0;
        Throwable failure = null;
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
                AttachState s = attacher.state();
                // the warm-up's reference goes as a handle's close does: at once if this thread is
                // attached (an executor running the task inline), otherwise deferred
                Attempt attempt = slots.warm(key, s, entry -> handles.release(entry, s));
                if (attempt == null) {
                    continue; // the key has an object or a creation now
                }
                if (attempt == Attempt.NeedsCapacity.INSTANCE) {
                    break; // no free capacity: stop rather than wait or evict
                }
                made++;
            }
            if (pool.isClosed()) { // during the last key's creation: what it made is disposed as CLOSED
                throw new PoolClosedException("pool '" + pool.name() + "' closed during warmUp(keys), after " + made
                        + " object(s) were made");
            }
        } catch (Throwable failed) {
            failure = failed;
        }
        if (made > 0) {
            idleWhatWasMade(); // before the stage completes: its objects are idle by then if the gate was free
        }
        if (failure == null) {
            result.complete(made);
        } else {
            result.completeExceptionally(failure);
        }
    }

    /** Applies the warm-up's deferred releases, so its objects go idle now if the gate is free. */
    private void idleWhatWasMade() {
        try {
            attacher.runInternal(s -> {}); // an attach applies what is pending
        } catch (Throwable failed) { // the releases stay pending for the next attach or the drainer
            pool.report(PoolError.Kind.DRAINER_FAILED, null, "applying a warm-up's releases failed", failed);
        }
    }
}
