package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.ErrorListener;
import io.refpool.core.Handle;
import io.refpool.core.LeakDetection;
import io.refpool.core.PoolBiFunction;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.core.PoolStats;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The pool: its entry points, each delegating to the owner of its protocol, and what closing does;
 * nothing else. {@link PoolAssembly} builds the owners. {@code RefPool} is its public face and calls
 * the owners it returns ({@link #calls}, {@link #control}, {@link #readings}) directly.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   owner              protocol
 *   {@link Attacher}           attach scopes, the gate, the dirty-flag check on the way in and out
 *   {@link ReleaseQueue}       pending releases and the dirty flag
 *   {@link DeferredReleases}   enqueueing them, applying them, and when a drainer does
 *   {@link SlotTable}          each key's entry or creation; single-flight creation
 *   {@link Entry}              an object's reference count and idle spells
 *   {@link IdleTier}           the Caffeine idle cache
 *   {@link Capacity}           permits, the line of waiters, the waiter-versus-idle race
 *   {@link EndOfLife}          every way out of "live": count 0, eviction, disposal on demand,
 *                              capacity reclaim, close; the one claim of an object for disposal
 *   {@link Disposals}          the per-thread work list of claimed objects, the disposer call
 *   {@link LeakTracker}        handles that become unreachable while open
 *   {@link Handles}            making a handle where the API returns one; giving a reference back
 *   {@link Acquirer}           the acquire paths: a retained entry, or a handle at the edge
 *   {@link Calls}              call, run, attached
 *   {@link AsyncCalls}         callAsync
 *   {@link RunControl}         the interrupter and section hooks around a call's function
 *   {@link Revival}            the validator and maximum lifetime, on revive and at count 0
 *   {@link Warmer}             warm-up
 *   {@link Observer}           timings and the held-too-long check
 *   {@link LifecycleControl}   flush, invalidate and clearIdle, attached as needed
 *   {@link Shutdown}           open, closing, closed: which close() works and who waits
 * </pre>
 *
 * <p>Each owner is given, when it is built, the few owners it calls, and {@link PoolState} for the
 * pool itself; no owner holds the pool. {@link PoolAssembly} builds them in the order they call
 * each other, and says how the few calls back up that order are made.
 *
 * <p>Closing ({@link Shutdown} has the states) fails the waiters, applies every pending release
 * and disposes the idle objects, attached; new attaches and acquires are refused from its start.
 *
 * <p>A handle closed on an attached thread decrements now; anywhere else it enqueues a pending
 * decrement, applied by the next attach or the drainer. At count 0 {@link EndOfLife#reachedZero}
 * idles the object or disposes it. Applying a deferred decrement is a plain decrement of whatever the
 * count is then, so a key acquired again in between stays live.
 */
public final class PoolCore<K, V> implements PoolState {
    static final ErrorListener LOGGING_LISTENER = new ErrorListener() {
        private final System.Logger log = System.getLogger("io.refpool");

        @Override
        public void onError(PoolError error) {
            log.log(System.Logger.Level.WARNING, error.message(), error.cause());
        }
    };

    private final AttachMode attachMode;
    private final ErrorListener errors;
    /** Leak detection and the observer are off: no handle is tracked. */
    private final boolean untracked;

    private final CancellationSource closing = new CancellationSource();
    private final PoolCounters counters = new PoolCounters();

    // the protocol owners the entry points and close call, built by PoolAssembly
    private final Attacher<K, V> attacher;
    private final Capacity<K, V> capacity;
    private final SlotTable<K, V> slots;
    private final EndOfLife<K, V> endOfLife;
    private final DeferredReleases<K, V> releases;
    private final LeakTracker leaks;
    /** Timings and the held-too-long check, or {@code null}: both off. */
    private final Observer observer;

    private final Handles<K, V> handles;
    private final Acquirer<K, V> acquirer;
    private final Calls<K, V> calls;
    private final AsyncCalls<K, V> asyncCalls;
    private final LifecycleControl<K, V> control;
    /** The interrupter and section hooks, or {@code null} if neither is set. */
    private final RunControl<K, V> runs;

    private final Warmer<K, V> warmer;
    private final PoolReadings readings;
    /** Thread leases, or {@code null}: off. */
    private final Leases<K, V> leases;

    private final Shutdown shutdown = new Shutdown();

    private volatile PoolHooks hooks;

    /** The pool's name: in messages, JFR events and drainer thread names. */
    private final String name;

    /** The numbers of pools built without a name. */
    private static final AtomicInteger UNNAMED = new AtomicInteger();

    /** Builds a pool from settings the public builder validated. */
    public PoolCore(PoolSettings<K, V> config) {
        this.attachMode = config.attachMode();
        this.errors = config.errors();
        this.observer = Observer.of(this, counters, config.recordTimings(), config.heldTooLong());
        this.untracked = config.leakDetection() == LeakDetection.OFF && observer == null;
        PoolAssembly<K, V> owners = new PoolAssembly<>(this, counters, closingToken(), observer, config);
        this.attacher = owners.attacher;
        this.capacity = owners.capacity;
        this.slots = owners.slots;
        this.endOfLife = owners.endOfLife;
        this.releases = owners.releases;
        this.leaks = owners.leaks;
        this.handles = owners.handles;
        this.acquirer = owners.acquirer;
        this.calls = owners.calls;
        this.asyncCalls = owners.asyncCalls;
        this.control = owners.control;
        this.runs = owners.runs;
        this.warmer = owners.warmer;
        this.readings = owners.readings;
        this.leases = owners.leases;
        // only a pool that was built takes a number or starts its check
        this.name = config.name() != null ? config.name() : "refpool-" + UNNAMED.incrementAndGet();
        if (observer != null) {
            observer.startChecks();
        }
    }

    // ---------------------------------------------------------------- state and test seams

    public AttachMode attachMode() {
        return attachMode;
    }

    /** {@return the release queue}, for tests of its protocol */
    public ReleaseQueue<?> releaseQueue() {
        return releases.queue();
    }

    @Override
    public boolean isClosed() {
        return shutdown.isClosed();
    }

    @Override
    public boolean awaitCloseFinished() throws InterruptedException {
        return !interruptsOnThisThread() && shutdown.awaitFinished();
    }

    /** {@return whether this thread runs the pool's interrupter}, which a close waits for */
    private boolean interruptsOnThisThread() {
        return runs != null && runs.interruptsOnThisThread();
    }

    /** {@return the pool's name}, as the builder set it or a generated one */
    @Override
    public String name() {
        return name;
    }

    /** {@return the token the first close() cancels}: it ends every wait for the gate, capacity or a call */
    CancellationToken closingToken() {
        return closing.token();
    }

    public boolean isAttached() {
        return attacher.state().depth > 0;
    }

    /**
     * What a thread keeps of a pool, for tests that check it is let go.
     *
     * @param attachState the thread's attach state of the pool
     * @param disposalWorkList the thread's disposal work list
     */
    public record ThreadState(Object attachState, Object disposalWorkList) {}

    /**
     * {@return the calling thread's attach state of this pool and its disposal work list}, for
     * tests of what a thread keeps of a pool; creates the state if the thread has none
     */
    public ThreadState threadStateForTests() {
        AttachState s = attacher.state();
        return new ThreadState(s, s.disposals);
    }

    /**
     * Forces the shared gate's reader bias on ({@code TRUE}) or off ({@code FALSE}), or gives it
     * back to revocations ({@code null}); nothing in {@code GLOBAL} mode.
     *
     * @throws IllegalStateException if the JVM runs without test seams ({@link TestSeams})
     */
    public void setGateBiasForTests(Boolean forced) {
        TestSeams.checkInstallable(Boolean.TRUE);
        attacher.setGateBiasForTests(forced);
    }

    /**
     * {@return the seams of the pool's thread leases}
     *
     * @throws IllegalStateException if the JVM runs without test seams, or the pool has no leases
     */
    public LeaseSeams<K, V> leasesForTests() {
        TestSeams.checkInstallable(Boolean.TRUE);
        if (leases == null) {
            throw new IllegalStateException("pool '" + name + "' has no thread leases");
        }
        return new LeaseSeams<>(leases, slots, attacher);
    }

    /** Sets how long after a sweep of the known threads a thread's start sweeps again; for tests. */
    public void knownThreadsSweepIntervalForTests(Duration interval) {
        attacher.knownThreadsSweepIntervalForTests(interval.toNanos());
    }

    /** {@return how many threads' attach states the pool keeps}: diagnostics, for a test that they stay bounded */
    public int knownThreads() {
        return attacher.knownThreads();
    }

    /** {@return the attach gate's waiters in line}: diagnostics, for a model test that waits for async steps to queue */
    public int gateQueueLength() {
        return attacher.gateQueueLength();
    }

    /**
     * Arms no watch for the drains handed to the executor, so a model checker whose executor keeps
     * the drainer out of the model sees no timer armed from its threads.
     *
     * @throws IllegalStateException if the JVM runs without test seams ({@link TestSeams})
     */
    public void unwatchDrainsForTests() {
        TestSeams.checkInstallable(Boolean.TRUE);
        releases.unwatchForTests();
    }

    /**
     * Installs the test seam; {@code null} turns it off.
     *
     * @throws IllegalStateException if the JVM runs without test seams ({@link TestSeams})
     */
    public void setHooks(PoolHooks hooks) {
        TestSeams.checkInstallable(hooks);
        this.hooks = hooks;
    }

    @Override
    public void hook(PoolHooks.Point point) {
        if (TestSeams.ON) { // folded away when the seams are off
            PoolHooks h = hooks;
            if (h != null) {
                h.at(point);
            }
        }
    }

    // ---------------------------------------------------------------- attach

    public Attachment attach(CancellationToken token) {
        refuseCancelled(token, "attach");
        return attacher.attach(token, false, false);
    }

    public Attachment stopTheWorld(CancellationToken token) {
        refuseCancelled(token, "stopTheWorld");
        return attacher.attach(token, true, false);
    }

    /** {@code attach(Duration)} and {@code stopTheWorld(Duration)}: the gate within {@code timeout}. */
    public Attachment attachWithin(Duration timeout, boolean exclusive) {
        return attacher.attach(CancellationToken.none(), Waits.checked(timeout), exclusive, false);
    }

    /** A token cancelled before the call fails it, whether or not the gate is free. */
    private static void refuseCancelled(CancellationToken token, String operation) {
        Objects.requireNonNull(token, "token");
        if (token.isCancellationRequested()) {
            throw new CancellationException(operation + "() with a token that was already cancelled");
        }
    }

    public <T> CompletionStage<T> attachAsync(
            CancellationToken token, boolean exclusive, Function<? super Attachment, ? extends T> fn) {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(fn, "fn");
        return attacher.attachAsync(token, exclusive, fn);
    }

    /** {@return the closure API: call, callAsync, attached} */
    public AsyncCalls<K, V> asyncCalls() {
        return asyncCalls;
    }

    public Calls<K, V> calls() {
        return calls;
    }

    // ---------------------------------------------------------------- acquire

    /**
     * The attached acquire. For an attached thread of a pool without leak detection or observer it
     * is a call for the reference ({@link Acquirer#reference}: the object's, or with thread leases a
     * borrow) and the path's only handle. Every other path is one call too: another handle, made
     * behind a call ({@link Acquirer#acquireTracked}), or an exception to throw ({@link
     * Acquirer#refusal}), so that a refused acquire returns no handle to merge with this one. So
     * the compiled acquire stays small enough for the JIT to inline into the caller, where it can
     * remove the handle of an acquire closed in the same method, also when it was compiled on its
     * own first, with every path taken.
     */
    public Handle<V> acquire(K key) {
        AttachState s = attacher.state();
        if (key != null && s.depth > 0) {
            return untracked
                    ? PooledHandle.on(handles, acquirer.reference(key, s), s)
                    : acquirer.acquireTracked(key, s);
        }
        throw acquirer.refusal(key, s);
    }

    /** {@code acquire(key, timeout)}: see {@link Acquirer#acquireWithinTimed}. */
    public Handle<V> acquire(K key, Duration timeout) {
        return acquirer.acquireWithinTimed(key, timeout, "acquire");
    }

    /** The acquire of {@code call(key, timeout, fn)}: see {@link Acquirer#acquireWithinTimed}. */
    @SuppressWarnings("unchecked") // every handle this pool opens is a PooledHandle
    public Handle<V> acquireForCall(K key, Duration timeout) {
        PooledHandle<K, V> handle = (PooledHandle<K, V>) acquirer.acquireWithinUntimed(key, timeout, "call");
        handle.unobserved(); // the call's function is observed instead, as every call's is
        return handle;
    }

    /** {@code pool.warmUp(keys, token)}: see {@link Warmer}. */
    public CompletionStage<Integer> warmUp(java.util.Collection<? extends K> keys, CancellationToken token) {
        return warmer.warmUp(keys, token);
    }

    /** {@code acquireAsync(key, token)}: see {@link Acquirer#acquireAsyncTimed}. */
    public CompletionStage<Handle<V>> acquireAsync(K key, CancellationToken token) {
        return acquirer.acquireAsyncTimed(key, token);
    }

    /** {@code acquireAsync(key, timeout)}: see {@link Acquirer#acquireAsyncWithinTimed}. */
    public CompletionStage<Handle<V>> acquireAsync(K key, Duration timeout) {
        return acquirer.acquireAsyncWithinTimed(key, timeout);
    }

    // ---------------------------------------------------------------- observation

    /** {@return where durations go}, or {@code null} if the pool does not record timings */
    public PoolTimings timings() {
        return observer == null ? null : observer.timings;
    }

    /**
     * {@return {@code fn} as the pool's calls run it}: itself, or (timings or the held-too-long
     * threshold on) timed and watched while it runs
     *
     * @param key the call's key
     * @param fn the function
     */
    public <T, E extends Exception> PoolFunction<? super V, ? extends T, E> observed(
            K key, PoolFunction<? super V, ? extends T, E> fn) {
        return observer == null || fn == null ? fn : observer.call(key, fn);
    }

    /**
     * {@return {@code fn} as the pool's two-key calls run it}: as {@link #observed(Object,
     * PoolFunction)}, one hold for both objects, reported under {@code first}
     *
     * @param first the call's first key
     * @param second its second key
     * @param fn the function
     */
    public <T, E extends Exception> PoolBiFunction<? super V, ? extends T, E> observed(
            K first, K second, PoolBiFunction<? super V, ? extends T, E> fn) {
        return observer == null || fn == null ? fn : observer.call(first, second, fn);
    }

    /**
     * Runs the held-too-long check as if the clock read {@code nowNanos}, for tests that do not wait
     * for the periodic one.
     *
     * @param nowNanos the clock's reading, {@code System.nanoTime()} based
     * @return how many holds it reported
     */
    public int checkHeldForTests(long nowNanos) {
        return observer == null ? 0 : observer.check(nowNanos);
    }

    /** {@return whether the pool's periodic held-too-long check is still scheduled}, for tests */
    public static int heldChecksQueuedForTests() {
        return Observer.checksQueued();
    }

    public boolean heldCheckScheduledForTests() {
        return observer != null && observer.checkQueued();
    }

    /**
     * {@return the keys with an object live or idle now}, a snapshot; weakly consistent: a key
     * acquired or disposed while it is taken may be in it or not
     */
    public Set<K> liveKeys() {
        return slots.liveKeys();
    }

    // ---------------------------------------------------------------- errors

    @Override
    public void timedOut() {
        counters.timeouts.increment();
    }

    @Override
    public void report(PoolError.Kind kind, Object key, String message, Throwable cause) {
        PoolError error = new PoolError(kind, key, message, cause);
        try {
            errors.onError(error);
        } catch (Throwable listenerFailure) {
            Waits.keepInterrupt(listenerFailure);
            try { // the report itself, with its cause, then the listener's failure
                if (errors != LOGGING_LISTENER) {
                    LOGGING_LISTENER.onError(error);
                }
                LOGGING_LISTENER.onError(
                        new PoolError(kind, key, "the error listener failed on: " + message, listenerFailure));
            } catch (Throwable loggingFailure) {
                // the log failed too (a handler that throws): nothing is left to tell, and a report
                // never fails the pool code that made it (a handle's close, a drain, an interrupt)
                Waits.keepInterrupt(loggingFailure);
            }
        }
    }

    // ---------------------------------------------------------------- lifecycle control and readings

    /** {@return flush, invalidate, clearIdle} */
    public LifecycleControl<K, V> control() {
        return control;
    }

    /** {@return the counters' readings, for meters} */
    public PoolReadings readings() {
        return readings;
    }

    // ---------------------------------------------------------------- close and stats

    /**
     * {@return whether a close may wait for the calling thread}: it is attached, suspended by the
     * pool, runs a creation the close waits for (a warm-up's factory), or runs the interrupter of a
     * call the close waits for, so it must not wait for that close
     */
    private boolean closeMayWaitForThisThread() {
        return attacher.isAttachedOrSuspendedByPool()
                || attacher.isDisposing()
                || slots.createsOnThisThread()
                || interruptsOnThisThread();
    }

    /**
     * Closes the pool. A close called while another thread's close is running waits for it to
     * finish, so that whichever returns first, the pool is closed; unless the calling thread is
     * attached to this pool, is running that close (a disposer, say), or runs a factory with its
     * attachment suspended by the pool (in {@code GLOBAL} mode), which that close waits for: waiting
     * would wait for itself, so it returns at once. Called from a warm-up's factory, whose creation
     * every close waits for, from an interrupter, whose call the close waits for, or from the
     * held-too-long check's listener, on the thread every pool's check shares, it starts the close on
     * a thread of its own and returns.
     */
    public void close() {
        if (!attacher.isAttachedOrSuspendedByPool()) { // an attached thread's close never waits for it
            if (slots.createsOnThisThread() || interruptsOnThisThread()) {
                // a warm-up's factory or an interrupter: the close waits for this creation or this
                // call, and, run here, would wait for an attached thread that waits for this one: the
                // close runs on a thread of its own instead
                close(Duration.ZERO);
                return;
            }
            if (Observer.checksOnThisThread()) {
                // a listener told of a hold by the periodic check, which every pool shares: the plain
                // close, which waits for that hold, runs on a thread of its own
                shutdown.closeElsewhere(this::close, closerName());
                return;
            }
        }
        shutdown.close(
                this::failWaitersDrainAndDispose,
                this::closeMayWaitForThisThread,
                () -> {
                    if (observer != null) {
                        observer.poolClosed();
                    }
                },
                attacher::forgetThread); // the closing thread keeps no state of a closed pool
    }

    /**
     * Closes the pool, waiting at most {@code timeout} for it: the close runs on a thread of its own
     * (or is the one already running), so a call that never returns keeps only that thread waiting;
     * at the limit the calls still running are interrupted (with an interrupter). {@code false}:
     * threads were still attached at the limit; the close goes on and finishes when they leave.
     *
     * @return whether the pool is closed
     */
    public boolean close(Duration timeout) {
        return shutdown.closeWithin(
                timeout,
                this::close,
                attacher::isAttachedOrSuspendedByPool, // a close it runs here never waits for it
                // a warm-up's factory, an interrupter, or a disposer (in its detached() section): the
                // close, on its own thread, waits for its creation, its call or its batch
                () -> slots.createsOnThisThread() || interruptsOnThisThread() || attacher.isDisposing(),
                closerName(),
                () -> {
                    attacher.reportThreadsEndedAttached(); // one may be what the close waits for
                    asyncCalls.abandonQueued(); // functions the call executor never started: given back
                    if (runs != null) {
                        runs.interruptAll(); // the calls still running at the limit, on this thread
                    }
                });
    }

    private String closerName() {
        return "refpool-close (pool '" + name + "')";
    }

    private void failWaitersDrainAndDispose() {
        try {
            closing.cancel();
        } catch (RuntimeException | Error e) {
            report(PoolError.Kind.CLOSE_CANCELLATION_FAILED, null, "failing the pool's waiters at close failed", e);
        }
        attacher.reportThreadsEndedAttached(); // the close would wait for them for ever, untold
        boolean own = !isAttached();
        Attachment attached = attacher.attach(CancellationToken.none(), attachMode != AttachMode.GLOBAL && own, true);
        try {
            AttachState s = attacher.state();
            slots.awaitCreations(s); // a factory that gave the gate up publishes before everything is disposed
            // also releases whose flag is still in flight, and batches other threads are applying
            releases.applyAllAtClose(s, own, slots::mayBeAwaitedOnThisThread);
            if (leases != null) {
                leases.revokeAll(s); // the closed flag is up: no lease is made from here on
                releases.applyAll(s); // what a sweep under way ended, queued before revokeAll returned
            }
            endOfLife.disposeAllAtClose(s);
            releases.cancelDelayedDrain(); // its timer would keep the closed pool reachable
            leaks.reportOpenAtClose(slots);
        } finally {
            attached.close();
        }
    }

    public PoolStats stats() {
        return counters.snapshot(slots, releases.queue().volatileSize(), capacity.waiters());
    }
}
