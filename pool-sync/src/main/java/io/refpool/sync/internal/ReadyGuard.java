package io.refpool.sync.internal;

import io.refpool.sync.Guard;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The guard of an acquire that did not wait, which is also its own already-completed stage: the
 * uncontended async path allocates this one object and no future, and when the caller's use of it
 * is inlined (acquire, continuation, close) the JIT can remove even that.
 *
 * <p>{@link #close()} releases exactly once. Its flag is guarded by this object's monitor rather
 * than set by a CAS: the JIT elides the monitor of a guard that does not escape, and so can
 * scalar-replace the whole guard, which it will not do for an object that is the target of a CAS.
 * The monitor is held for a flag test-and-set only, never around anything that can block.
 *
 * <p>The common synchronous continuations ({@code thenAccept}, {@code thenApply}, {@code thenRun},
 * {@code handle}, {@code whenComplete}, {@code exceptionally}) run at once on the calling thread,
 * as they would on a completed {@link CompletableFuture}; every other method delegates to a
 * completed future holding this guard.
 */
final class ReadyGuard implements WaiterQueue.ReadyGuardStage {
    private static final CompletionStage<Void> DONE = CompletableFuture.completedStage(null);

    private final WaiterQueue queue;
    private final int arg;
    private boolean released;

    ReadyGuard(WaiterQueue queue, int arg) {
        this.queue = queue;
        this.arg = arg;
    }

    @Override
    public void close() {
        // two methods under 35 bytes of bytecode each, so that a close on a cold path (the
        // exception edge of try/finally) is inlined too: a close left as a call lets the guard
        // escape on that path, and the JIT then allocates it and takes its monitor on every path
        if (markReleased()) {
            queue.release(arg);
        }
    }

    /** {@return whether this call released the guard} (false: closed already) */
    private synchronized boolean markReleased() {
        if (released) {
            return false;
        }
        released = true;
        return true;
    }

    /** {@return a completed future holding this guard}, which refuses {@code obtrude...} as a granted waiter does */
    private CompletableFuture<Guard> future() {
        return new GrantedFuture(this, queue);
    }

    private static <U> CompletionStage<U> failedWith(Throwable t) {
        return CompletableFuture.failedStage(t instanceof CompletionException ? t : new CompletionException(t));
    }

    @Override
    public CompletableFuture<Guard> toCompletableFuture() {
        return future();
    }

    @Override
    public <U> CompletionStage<U> thenApply(Function<? super Guard, ? extends U> fn) {
        Objects.requireNonNull(fn, "fn");
        try {
            return CompletableFuture.completedStage(fn.apply(this));
        } catch (Throwable t) {
            return failedWith(t);
        }
    }

    @Override
    public CompletionStage<Void> thenAccept(Consumer<? super Guard> action) {
        Objects.requireNonNull(action, "action");
        try {
            action.accept(this);
            return DONE;
        } catch (Throwable t) {
            return failedWith(t);
        }
    }

    @Override
    public CompletionStage<Void> thenRun(Runnable action) {
        Objects.requireNonNull(action, "action");
        try {
            action.run();
            return DONE;
        } catch (Throwable t) {
            return failedWith(t);
        }
    }

    @Override
    public <U> CompletionStage<U> handle(BiFunction<? super Guard, Throwable, ? extends U> fn) {
        Objects.requireNonNull(fn, "fn");
        try {
            return CompletableFuture.completedStage(fn.apply(this, null));
        } catch (Throwable t) {
            return failedWith(t);
        }
    }

    @Override
    public CompletionStage<Guard> whenComplete(BiConsumer<? super Guard, ? super Throwable> action) {
        Objects.requireNonNull(action, "action");
        try {
            action.accept(this, null);
            return this;
        } catch (Throwable t) {
            return failedWith(t);
        }
    }

    @Override
    public CompletionStage<Guard> exceptionally(Function<Throwable, ? extends Guard> fn) {
        Objects.requireNonNull(fn, "fn");
        return this;
    }

    @Override
    public <U> CompletionStage<U> thenApplyAsync(Function<? super Guard, ? extends U> fn) {
        return future().thenApplyAsync(fn);
    }

    @Override
    public <U> CompletionStage<U> thenApplyAsync(Function<? super Guard, ? extends U> fn, Executor executor) {
        return future().thenApplyAsync(fn, executor);
    }

    @Override
    public CompletionStage<Void> thenAcceptAsync(Consumer<? super Guard> action) {
        return future().thenAcceptAsync(action);
    }

    @Override
    public CompletionStage<Void> thenAcceptAsync(Consumer<? super Guard> action, Executor executor) {
        return future().thenAcceptAsync(action, executor);
    }

    @Override
    public CompletionStage<Void> thenRunAsync(Runnable action) {
        return future().thenRunAsync(action);
    }

    @Override
    public CompletionStage<Void> thenRunAsync(Runnable action, Executor executor) {
        return future().thenRunAsync(action, executor);
    }

    @Override
    public <U, V> CompletionStage<V> thenCombine(
            CompletionStage<? extends U> other, BiFunction<? super Guard, ? super U, ? extends V> fn) {
        return future().thenCombine(other, fn);
    }

    @Override
    public <U, V> CompletionStage<V> thenCombineAsync(
            CompletionStage<? extends U> other, BiFunction<? super Guard, ? super U, ? extends V> fn) {
        return future().thenCombineAsync(other, fn);
    }

    @Override
    public <U, V> CompletionStage<V> thenCombineAsync(
            CompletionStage<? extends U> other,
            BiFunction<? super Guard, ? super U, ? extends V> fn,
            Executor executor) {
        return future().thenCombineAsync(other, fn, executor);
    }

    @Override
    public <U> CompletionStage<Void> thenAcceptBoth(
            CompletionStage<? extends U> other, BiConsumer<? super Guard, ? super U> action) {
        return future().thenAcceptBoth(other, action);
    }

    @Override
    public <U> CompletionStage<Void> thenAcceptBothAsync(
            CompletionStage<? extends U> other, BiConsumer<? super Guard, ? super U> action) {
        return future().thenAcceptBothAsync(other, action);
    }

    @Override
    public <U> CompletionStage<Void> thenAcceptBothAsync(
            CompletionStage<? extends U> other, BiConsumer<? super Guard, ? super U> action, Executor executor) {
        return future().thenAcceptBothAsync(other, action, executor);
    }

    @Override
    public CompletionStage<Void> runAfterBoth(CompletionStage<?> other, Runnable action) {
        return future().runAfterBoth(other, action);
    }

    @Override
    public CompletionStage<Void> runAfterBothAsync(CompletionStage<?> other, Runnable action) {
        return future().runAfterBothAsync(other, action);
    }

    @Override
    public CompletionStage<Void> runAfterBothAsync(CompletionStage<?> other, Runnable action, Executor executor) {
        return future().runAfterBothAsync(other, action, executor);
    }

    @Override
    public <U> CompletionStage<U> applyToEither(CompletionStage<? extends Guard> other, Function<? super Guard, U> fn) {
        return future().applyToEither(other, fn);
    }

    @Override
    public <U> CompletionStage<U> applyToEitherAsync(
            CompletionStage<? extends Guard> other, Function<? super Guard, U> fn) {
        return future().applyToEitherAsync(other, fn);
    }

    @Override
    public <U> CompletionStage<U> applyToEitherAsync(
            CompletionStage<? extends Guard> other, Function<? super Guard, U> fn, Executor executor) {
        return future().applyToEitherAsync(other, fn, executor);
    }

    @Override
    public CompletionStage<Void> acceptEither(CompletionStage<? extends Guard> other, Consumer<? super Guard> action) {
        return future().acceptEither(other, action);
    }

    @Override
    public CompletionStage<Void> acceptEitherAsync(
            CompletionStage<? extends Guard> other, Consumer<? super Guard> action) {
        return future().acceptEitherAsync(other, action);
    }

    @Override
    public CompletionStage<Void> acceptEitherAsync(
            CompletionStage<? extends Guard> other, Consumer<? super Guard> action, Executor executor) {
        return future().acceptEitherAsync(other, action, executor);
    }

    @Override
    public CompletionStage<Void> runAfterEither(CompletionStage<?> other, Runnable action) {
        return future().runAfterEither(other, action);
    }

    @Override
    public CompletionStage<Void> runAfterEitherAsync(CompletionStage<?> other, Runnable action) {
        return future().runAfterEitherAsync(other, action);
    }

    @Override
    public CompletionStage<Void> runAfterEitherAsync(CompletionStage<?> other, Runnable action, Executor executor) {
        return future().runAfterEitherAsync(other, action, executor);
    }

    @Override
    public <U> CompletionStage<U> thenCompose(Function<? super Guard, ? extends CompletionStage<U>> fn) {
        return future().thenCompose(fn);
    }

    @Override
    public <U> CompletionStage<U> thenComposeAsync(Function<? super Guard, ? extends CompletionStage<U>> fn) {
        return future().thenComposeAsync(fn);
    }

    @Override
    public <U> CompletionStage<U> thenComposeAsync(
            Function<? super Guard, ? extends CompletionStage<U>> fn, Executor executor) {
        return future().thenComposeAsync(fn, executor);
    }

    @Override
    public <U> CompletionStage<U> handleAsync(BiFunction<? super Guard, Throwable, ? extends U> fn) {
        return future().handleAsync(fn);
    }

    @Override
    public <U> CompletionStage<U> handleAsync(BiFunction<? super Guard, Throwable, ? extends U> fn, Executor executor) {
        return future().handleAsync(fn, executor);
    }

    @Override
    public CompletionStage<Guard> whenCompleteAsync(BiConsumer<? super Guard, ? super Throwable> action) {
        return future().whenCompleteAsync(action);
    }

    @Override
    public CompletionStage<Guard> whenCompleteAsync(
            BiConsumer<? super Guard, ? super Throwable> action, Executor executor) {
        return future().whenCompleteAsync(action, executor);
    }

    @Override
    public String toString() {
        boolean r;
        synchronized (this) {
            r = released;
        }
        return "Guard[" + (r ? "released" : "held") + " on " + queue.describe() + "]";
    }
}
