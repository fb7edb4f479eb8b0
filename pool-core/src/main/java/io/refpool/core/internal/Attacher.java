package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.PoolClosedException;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Continuations;
import io.refpool.sync.Guard;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Attach scopes: the gate, each thread's nesting depth, and the dirty-flag check on the way in and
 * out.
 *
 * <h2>Implementation notes</h2>
 *
 * <p>Each thread keeps one {@link AttachState} per pool in a thread-local. A nested attach only
 * bumps the depth, reopens the reusable scope object of that level and checks the release queue's
 * flag: with nothing pending that is one thread-local lookup, two plain writes to thread-confined
 * memory and one acquire load, with no allocation and no write to shared memory. The outermost
 * attach also passes the gate: the allocation-free {@code tryLock} pair when the gate is free,
 * otherwise a parked, FIFO wait that the caller's token, an interrupt, or the pool's close cancels
 * ({@link GateWaits}).
 *
 * <p>Every attach (nested or not) and every outermost detach applies pending releases if the flag
 * is up. The depth is reset <em>before</em> the gate is released, so a waiter granted the gate by that
 * release, whose continuation runs on this thread, finds the thread detached.
 */
final class Attacher<K, V> {
    /** The key of a closure on no key ({@link #enterClosure(String)}). */
    private static final Object NO_KEY = new Object();

    /** The attach-side check of the release queue: {@link DeferredReleases#applyIfDirty}. */
    @FunctionalInterface
    interface PendingReleases {
        /** Applies pending releases if the dirty flag is up: one acquire load when nothing is pending. */
        void applyIfDirty(AttachState s);
    }

    /** The section a thread holds: {@link SlotTable#sectionHeldBy}. */
    @FunctionalInterface
    interface HeldSections<K> {
        /** {@return the key of an object whose section the thread with this id holds}, or {@code null} */
        K keyHeldBy(long threadId);
    }

    private final PoolState pool;

    /** Read by a caller's {@code detached()}, which a section holder may not call. */
    private final HeldSections<K> sections;

    /** The release queue, read here only for its dirty flag: one acquire load on every attach. */
    private final ReleaseQueue<?> queue;

    /** Applies what is pending, called only when the flag is up. */
    private final PendingReleases releases;

    /** How a thread passes the gate: at once, or waiting, blocking or not. */
    private final GateWaits gates;

    private final AttachMode mode;

    /** Every thread's state, so that a thread that ended attached can be named ({@link #reportThreadsEndedAttached}). */
    private final KnownThreads known = new KnownThreads();

    private final ThreadLocal<AttachState> states =
            ThreadLocal.withInitial(() -> known.add(new AttachState(Thread.currentThread())));

    Attacher(
            PoolState pool,
            CancellationToken closing,
            ReleaseQueue<?> queue,
            PendingReleases releases,
            HeldSections<K> sections,
            AttachMode mode,
            Duration defaultWait) {
        this.pool = pool;
        this.sections = sections;
        this.queue = queue;
        this.releases = releases;
        this.mode = mode;
        this.gates = new GateWaits(
                pool,
                closing,
                mode == AttachMode.GLOBAL ? new Gate.Exclusive() : new Gate.Shared(),
                mode,
                defaultWait,
                this::reportThreadsEndedAttached);
    }

    /**
     * Reports each thread that ended attached, once: a thread that dies with an attachment open
     * never gives its hold of the gate back, so the pool's close, every {@code stopTheWorld()} and,
     * in {@code GLOBAL} mode, every attach wait for it for ever. Called when a close starts, when a
     * bounded close reaches its limit and when a timed wait of the pool times out (it may be for the gate).
     */
    void reportThreadsEndedAttached() {
        for (AttachState s : known.takeEndedAttached()) {
            reportLostHold(s, "ended attached to pool '" + pool.name() + "' (an attachment it never closed)");
        }
        for (AttachState s : known.takeOrphans()) {
            reportLostHold(
                    s,
                    "lost its attachment to pool '" + pool.name() + "': its thread-locals were cleared while"
                            + " it was attached");
        }
    }

    private void reportLostHold(AttachState s, String what) {
        pool.report(
                io.refpool.core.PoolError.Kind.THREAD_ENDED_ATTACHED,
                null,
                "thread " + Threads.describe(s.thread) + " " + what + ": its hold of the gate is never given back, so "
                        + (mode == AttachMode.GLOBAL ? "every attach, " : "")
                        + "stopTheWorld() and the pool's close wait for it for ever",
                null);
    }

    void knownThreadsSweepIntervalForTests(long nanos) {
        known.sweepIntervalForTests(nanos);
    }

    /** {@return how many threads' states this pool knows}, for tests */
    int knownThreads() {
        return known.size();
    }

    /**
     * The dirty-flag check every attach makes: the flag is read here, inline, and the queue is
     * taken only when it is up.
     */
    private void applyIfDirty(AttachState s) {
        if (queue.isDirty()) {
            releases.applyIfDirty(s);
        }
    }

    private void checkOpen(String operation) {
        if (pool.isClosed()) {
            throw new PoolClosedException(pool.onClosedPool(operation));
        }
    }

    /** {@link #checkOpen(String)} of {@code name(key)}, the key described only if refused. */
    private void checkOpen(String name, Object key) {
        if (pool.isClosed()) {
            throw new PoolClosedException(pool.onClosedPool(name + "(" + Keys.describe(key) + ")"));
        }
    }

    AttachState state() {
        return states.get();
    }

    /**
     * {@return whether the calling thread is attached, or suspended by the pool itself (a
     * {@code GLOBAL} factory, a wait for a section)}: a close running elsewhere may wait for such a
     * thread (for its gate-free creation), so that thread must not wait for the close
     */
    boolean isAttachedOrSuspendedByPool() {
        AttachState s = states.get();
        return s.depth > 0 || s.poolSuspensions > 0;
    }

    /**
     * {@return whether the calling thread runs a disposal loop} (a disposer, also in its {@code
     * detached()} section): a close elsewhere waits for the batch of releases it applies
     */
    boolean isDisposing() {
        return states.get().disposing;
    }

    /**
     * Drops the calling thread's state for this pool unless it is attached (the pool closed), or
     * suspended: a {@code detached()} section or a factory closed the pool, and the attachment it
     * suspended is taken back, in this state, when it returns.
     */
    void forgetThread() {
        AttachState s = states.get();
        if (s.depth == 0 && s.base == 0) {
            states.remove();
            known.forget(s);
        }
    }

    /**
     * Runs pool-internal work (a drain) attached without ever parking: at once if this thread is
     * attached or the gate is free, otherwise when the gate is granted, on the thread that grants
     * it. Failures of work that runs later go to the error listener.
     */
    void runInternal(Consumer<AttachState> work) {
        AttachState s = states.get();
        if (s.depth > 0) {
            work.accept(s);
            return;
        }
        if (gates.tryEnter(false)) {
            runAttached(null, false, attachment -> {
                work.accept(states.get());
                return null;
            });
            return;
        }
        gates.enterAsync(false)
                .thenAccept(guard -> {
                    Runnable granted = () -> runAttached(guard, false, attachment -> {
                        work.accept(states.get());
                        return null;
                    });
                    if (states.get().poolSuspensions > 0) {
                        // granted by a thread giving the gate up for its factory (or a wait): its
                        // work must not run first, inside that creation, so a thread of its own runs it
                        handOverGranted(granted);
                    } else {
                        granted.run();
                    }
                })
                .exceptionally(failure -> {
                    pool.report(
                            io.refpool.core.PoolError.Kind.DRAINER_FAILED,
                            null,
                            "the drainer failed to apply pending releases",
                            failure instanceof CompletionException ? failure.getCause() : failure);
                    return null;
                });
    }

    /** Forces the gate's reader bias on or off, or ({@code null}) gives it back to revocations. */
    void setGateBiasForTests(Boolean forced) {
        gates.setBiasPolicy(forced);
    }

    int gateQueueLength() {
        return gates.queueLength();
    }

    /**
     * Attaches the calling thread.
     *
     * @param exclusive whether to hold the gate exclusively ({@code pool.stopTheWorld()})
     * @param internal a drainer or the pool's close: allowed after close, not cancelled by it
     */
    Attachment attach(CancellationToken token, boolean exclusive, boolean internal) {
        return attach(token, null, exclusive, internal);
    }

    /**
     * Attaches the calling thread, waiting for the gate at most {@code timeout} ({@code null}: no
     * limit but the token's).
     */
    Attachment attach(CancellationToken token, Duration timeout, boolean exclusive, boolean internal) {
        AttachState s = states.get();
        int depth = s.depth;
        if (depth > 0) {
            if (exclusive && !s.exclusive) {
                if (mode != AttachMode.GLOBAL) {
                    throw new IllegalStateException("stopTheWorld() on a thread that is already attached shared would"
                            + " wait for itself: call it before attaching, or from a detached() section");
                }
                return stopTheWorldNested(s);
            }
            return attachNested(s);
        }
        if (!internal) {
            checkOpen(exclusive ? "stopTheWorld()" : "attach()");
        }
        Guard guard = timeout == null ? gates.enter(token, exclusive, internal) : gates.enterWithin(timeout, exclusive);
        if (!internal && pool.isClosed()) {
            gates.leave(guard, exclusive); // still detached: depth 0, no scope opened
            throw new PoolClosedException("pool '" + pool.name() + "' closed while this thread waited to attach");
        }
        AttachScope scope = s.enterOutermost(this, exclusive, guard);
        applyIfDirty(s);
        return scope;
    }

    /**
     * The closure form of a shared attach ({@code pool.call}, {@code pool.attached}): the same
     * entry as {@link #attach} but with no scope object, so nothing is written but the thread's
     * depth. The caller runs its work, then {@link #exitClosure} in a {@code finally} with the depth
     * this returned.
     *
     * @return the calling thread's state, at the closure's level ({@code s.depth})
     */
    AttachState enterClosure(String operation) {
        return enterClosure(operation, NO_KEY);
    }

    /**
     * {@link #enterClosure(String)} for the operation {@code name} on {@code key}: a closed pool
     * refuses {@code name(key)}.
     */
    AttachState enterClosure(String name, Object key) {
        AttachState s = states.get();
        if (s.depth > 0) {
            s.depth++; // the level has no scope object: a nested attach inside uses the slot above
        } else {
            enterClosureOutermost(s, name, key);
        }
        try {
            applyIfDirty(s);
        } catch (Throwable t) { // the closure never ran: leave as if it had not entered
            exitClosure(s, s.depth);
            throw t;
        }
        return s;
    }

    private void enterClosureOutermost(AttachState s, String operation, Object key) {
        if (key == NO_KEY) {
            checkOpen(operation);
        } else {
            checkOpen(operation, key);
        }
        Guard guard = gates.enter(CancellationToken.none(), false, false);
        if (pool.isClosed()) {
            gates.leave(guard, false);
            throw new PoolClosedException("pool '" + pool.name() + "' closed while this thread waited to attach");
        }
        s.enterOutermostWithoutScope(this, guard);
    }

    /**
     * {@link #enterClosure} on a pool whose close has finished: {@code flush()} of the releases of
     * handles closed since, waiting for the gate interruptibly ({@link GateWaits#enterAfterClose}).
     */
    AttachState enterClosureAfterClose() throws InterruptedException {
        AttachState s = states.get();
        if (s.depth > 0) {
            s.depth++;
        } else {
            s.enterOutermostWithoutScope(this, gates.enterAfterClose());
        }
        return s;
    }

    /**
     * Runs pool-internal {@code work} granted the gate on a thread of its own, at once: not on a
     * drainer thread, where it would hold the gate while queued behind other pools' drains. Here
     * only if no thread can be started.
     */
    private void handOverGranted(Runnable work) {
        Runnable reported = () -> {
            try {
                work.run();
            } catch (Throwable t) {
                pool.report(
                        io.refpool.core.PoolError.Kind.DRAINER_FAILED,
                        null,
                        "the drainer failed to apply pending releases",
                        t);
            }
        };
        try {
            OwnThreads.start("drain", pool.name(), reported);
        } catch (Throwable noThread) {
            work.run();
        }
    }

    /**
     * Leaves a closure entered at {@code level}. Attachments the work opened inside and left open
     * end with it, as they do for an async function.
     */
    void exitClosure(AttachState s, int level) {
        if (s.depth > level) {
            s.endScopesAbove(level);
        }
        if (level > 1) {
            s.depth = level - 1;
        } else {
            s.depth = 1;
            detachOutermost(s);
        }
    }

    /**
     * Closes {@code attachment}, one {@link #attach} opened around a caller's function (a two-key or
     * timed {@code call}): attachments the function opened and left open end first, as they do for
     * a closure ({@link #exitClosure}), so the pool's own close finds its level innermost.
     */
    void closeAround(Attachment attachment) {
        AttachScope scope = (AttachScope) attachment;
        AttachState s = scope.state;
        if (scope.open && s.depth > scope.level && s.base + scope.level - 1 == scope.slot) {
            s.endScopesAbove(scope.level);
            s.depth = scope.level;
        }
        attachment.close();
    }

    /** A nested attach: one level deeper, then the flag's check. The only place it is done. */
    private AttachScope attachNested(AttachState s) {
        AttachScope scope = s.enterNested();
        applyIfDirty(s);
        return scope;
    }

    /**
     * A {@code stopTheWorld()} nested in a plain {@code GLOBAL} attachment: the thread holds the one
     * gate already, and from this level until it closes keeps it while its factories run and while it
     * waits for a section ({@link #yieldsGate}), as an outermost one does.
     */
    private AttachScope stopTheWorldNested(AttachState s) {
        AttachScope scope = s.enterNested();
        scope.stopsWorld = true;
        s.exclusive = true;
        applyIfDirty(s);
        return scope;
    }

    /** Applies pending releases if any, then gives the gate up; the depth is zero before the release. */
    void detachOutermost(AttachState s) {
        try {
            applyIfDirty(s);
        } finally {
            boolean exclusive = s.exclusive;
            gates.leave(s.leaveOutermost(), exclusive);
        }
    }

    /**
     * {@return whether this attachment gives the gate up while its factory runs or while it waits for
     * a section}: in {@code GLOBAL} mode, where the gate lets one thread in, so that neither a slow
     * creation nor a section's holder, which may have given the gate up itself, stops every other
     * thread; unless the thread stops the world, which promises to keep newcomers out for its whole
     * scope
     */
    boolean yieldsGate(AttachState s) {
        return mode == AttachMode.GLOBAL && s.depth > 0 && !s.exclusive;
    }

    /**
     * Gives the gate up around {@code work} and takes it back, keeping the nesting depth; unlike
     * {@link #detached} it applies nothing pending, so what {@code work} interrupts (an acquire, a
     * disposal loop) finds the pool as it left it. Taking the gate back is not cancelled by close:
     * a suspended thread always returns to its attachment. {@code s} is not attached: {@code work}
     * runs at once.
     */
    <T> T suspended(AttachState s, Supplier<T> work) {
        if (s.depth == 0) {
            return work.get();
        }
        s.poolSuspensions++;
        try {
            return suspend(s, work);
        } finally {
            s.poolSuspensions--;
        }
    }

    /**
     * Gives the gate up around {@code work} and takes it back, keeping the nesting depth.
     * Attachments {@code work} opened and left open end when it returns, as a closure's do: the
     * gate they hold is given back before this thread waits to take it again.
     */
    private <T> T suspend(AttachState s, Supplier<T> work) {
        boolean exclusive = s.exclusive;
        boolean asyncStep = s.asyncStep; // an async step that gave the gate up keeps none meanwhile
        Guard held = s.guard;
        int depth = s.suspend();
        s.asyncStep = false;
        // inside a continuation, the waiter this grants is told now: work may block in ways the
        // gate's queue cannot see (a creation, a latch), and that waiter owns the gate meanwhile.
        // What this thread deferred before stays deferred, for the continuation's end
        Continuations.releaseNow(() -> gates.leave(held, exclusive));
        try {
            return work.get();
        } finally {
            try {
                if (s.depth > 0) { // attached inside and left open: in GLOBAL mode it holds the gate wanted back
                    s.endScopesAbove(0);
                    s.depth = 1;
                    detachOutermost(s);
                }
            } finally {
                s.resume(this, depth, exclusive, gates.enter(CancellationToken.none(), exclusive, true));
                s.asyncStep = asyncStep;
            }
        }
    }

    /**
     * Gives the gate up around {@code work} and takes it back, keeping the nesting depth, applying
     * what is pending on the way out and back in.
     */
    <T> T detached(AttachState s, Supplier<T> work) {
        applyIfDirty(s);
        try {
            return suspend(s, work);
        } finally {
            applyIfDirty(s);
        }
    }

    /**
     * A caller's {@code Attachment.detached()}: refused while the thread holds an object's section,
     * since a section holder never waits for the gate, and taking it back may wait behind a
     * {@code stopTheWorld()} that waits for a thread that waits for the section. The check scans
     * the pool's objects, once per call.
     */
    <T> T detachedByCaller(AttachState s, Supplier<T> work, Supplier<String> operation) {
        K key = sectionHeldBy();
        if (key != null) { // the operation is named only here: its name may call the key's toString
            throw new IllegalStateException(
                    operation.get() + " while this thread holds the section of the object of key "
                            + Keys.describe(key) + " in pool '" + pool.name() + "': it gives the gate up, and taking it"
                            + " back could wait behind a stopTheWorld() that waits for a thread waiting for that"
                            + " section; release the section first, or give the gate up before taking it");
        }
        return detached(s, work);
    }

    /** {@return the key of an object whose section the calling thread holds}, or {@code null}: a scan */
    K sectionHeldBy() {
        return sections.keyHeldBy(Thread.currentThread().getId());
    }

    /** {@return whether this is a {@code GLOBAL} pool} */
    boolean isGlobal() {
        return mode == AttachMode.GLOBAL;
    }

    /**
     * Waits for the gate without parking, then runs {@code fn} attached on the granting thread, unless
     * that is one of the drainer threads every pool shares ({@link DrainerThreads}): a drain that
     * disposes an object or gives the gate up grants waits, and the work they were waiting to do (a
     * factory, an {@code attachAsync} function) would hold a thread other pools' drains need. Such
     * work moves to the library's call threads.
     */
    <T> CompletionStage<T> attachAsync(
            CancellationToken token, boolean exclusive, Function<? super Attachment, ? extends T> fn) {
        CompletionStage<T> refused = gates.refuseAsync(token);
        if (refused != null) {
            return refused;
        }
        if (!DrainerThreads.owns(Thread.currentThread()) && gates.tryEnter(exclusive)) {
            if (pool.isClosed()) { // closed since the check: a close that returned must not see fn run
                gates.leave(null, exclusive);
                return CompletableFuture.failedFuture(new PoolClosedException(pool.onClosedPool("attachAsync()")));
            }
            try {
                return CompletableFuture.completedStage(runAttached(null, exclusive, fn));
            } catch (Throwable t) {
                return CompletableFuture.failedFuture(t);
            }
        }
        // completed with the failure itself, not through a dependent stage, which would wrap it
        CompletableFuture<T> result = new CompletableFuture<>();
        CancellationSource callerGaveUp = CancellationSource.linkedTo(token);
        // attached, the releases pending are applied before fn: a caller may give up meanwhile
        Function<? super Attachment, ? extends T> unlessGivenUp = attachment -> {
            if (result.isDone()) {
                throw new CancellationException("attachAsync() in pool '" + pool.name()
                        + "': the caller settled the stage before the function started");
            }
            return fn.apply(attachment);
        };
        gates.waitAsync(callerGaveUp.token(), exclusive).whenComplete((guard, failure) -> {
            callerGaveUp.close();
            if (failure != null) {
                result.completeExceptionally(Waits.unwrapped(failure));
            } else if (result.isDone()) { // the caller completed it while the grant came: fn never runs
                gates.leave(guard, exclusive);
            } else if (states.get().poolSuspensions > 0) {
                runElsewhere(
                        work -> OwnThreads.start("attach", pool.name(), work), guard, exclusive, unlessGivenUp, result);
            } else if (DrainerThreads.owns(Thread.currentThread())) {
                runElsewhere(OwnThreads.calls()::execute, guard, exclusive, unlessGivenUp, result);
            } else {
                Waits.completeWith(result, () -> runAttached(guard, exclusive, unlessGivenUp));
            }
        });
        // completed by the caller (cancel, complete, orTimeout): the wait ends; completed by the
        // wait itself: the wait is over and this cancels nothing
        result.whenComplete((value, failure) -> callerGaveUp.cancel());
        return result;
    }

    /**
     * Runs a granted {@code fn} attached, on another thread that {@code start} hands it to, with the
     * gate the grant gave: a thread of the pool's own when the grant came from a thread that gave the
     * gate up inside the pool (for its factory, or to wait for a section), where running {@code fn}
     * would hold that factory or wait up and fail any use of the object it is creating ("would wait
     * for itself"); the library's call threads when it came from a drainer thread every pool shares,
     * which {@code fn} would hold from other pools' drains. If the hand-over fails, the gate is given
     * back and the call fails.
     */
    private <T> void runElsewhere(
            Consumer<Runnable> start,
            Guard guard,
            boolean exclusive,
            Function<? super Attachment, ? extends T> fn,
            CompletableFuture<T> result) {
        try {
            start.accept(() -> Waits.completeWith(result, () -> runAttached(guard, exclusive, fn)));
        } catch (Throwable noThread) {
            gates.leave(guard, exclusive);
            result.completeExceptionally(noThread);
        }
    }

    /**
     * Holds the gate for an async caller without attaching a thread ({@link GateWaits#holdGate}); the
     * guard is adopted by {@link #runAttached} on whichever thread runs the caller's work.
     */
    CompletionStage<Guard> holdGate(CancellationToken token, boolean exclusive) {
        return gates.holdGate(token, exclusive);
    }

    /**
     * Runs {@code fn} attached with the gate already held through {@code guard} ({@code null}: entered
     * raw): an async step ({@link AttachStateFields#asyncStep}), whose creations keep the gate.
     */
    <T> T runAttached(Guard guard, boolean exclusive, Function<? super Attachment, ? extends T> fn) {
        AttachState s = states.get();
        boolean wasAsyncStep = s.asyncStep;
        s.asyncStep = true;
        if (s.depth > 0) {
            // granted on a thread that is attached already: run nested. The thread's own hold covers
            // the level, so the extra one goes at once: a detached() inside leaves the gate whole
            AttachScope scope = s.enterNested();
            try {
                gates.leave(guard, exclusive); // what it grants may run here and throw: the level still ends
                applyIfDirty(s);
                return fn.apply(scope);
            } finally {
                if (scope.open) {
                    s.endScopesAbove(scope.level);
                    s.leaveNested(scope);
                }
                s.asyncStep = wasAsyncStep;
            }
        }
        AttachScope scope = s.enterOutermost(this, exclusive, guard);
        try {
            applyIfDirty(s);
            return fn.apply(scope);
        } finally {
            s.asyncStep = wasAsyncStep;
            if (scope.open) {
                s.unwindTo1(); // scopes that fn left open inside end with it
                scope.close();
            }
        }
    }
}
