package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.DisposalCause;
import io.refpool.core.ErrorListener;
import io.refpool.core.Handle;
import io.refpool.core.LeakDetection;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.core.PoolStats;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The pool: owns its lifecycle and wires the protocol owners together. {@code RefPool} is its
 * public face.
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
 *   {@link Disposals}          the claim, the per-thread work list, the disposer call
 *   {@link LeakTracker}        handles that become unreachable while open
 *   {@link LifecycleControl}   flush, invalidate and clearIdle: retiring objects on demand
 *
 *   lifecycle   to        by
 *   OPEN        CLOSING   the first close(); new attaches and acquires are refused from here on
 *   CLOSING     CLOSED    that close(), after failing waiters, draining and disposing idle objects
 * </pre>
 *
 * <p>A handle closed on an attached thread decrements now; anywhere else it enqueues a pending
 * decrement, applied by the next attach or the drainer. At count 0 {@link Capacity#reachedZero}
 * idles the object or disposes it. Applying a deferred decrement is a plain decrement of whatever the
 * count is then, so a key acquired again in between stays live.
 */
public final class PoolCore<K, V> {
    static final ErrorListener LOGGING_LISTENER = new ErrorListener() {
        private final System.Logger log = System.getLogger("io.refpool");

        @Override
        public void onError(PoolError error) {
            log.log(System.Logger.Level.WARNING, error.message(), error.cause());
        }
    };

    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;

    private final AttachMode attachMode;
    private final ErrorListener errors;
    private final LeakTracker leaks;
    /** Leak detection is off: no handle is tracked. */
    private final boolean untracked;

    final PoolCounters counters = new PoolCounters();

    // the protocol owners, read by each other through these fields; idle is null without an idle cache
    final DeferredReleases<K, V> releases;
    final SlotTable<K, V> slots;
    final IdleTier<K, V> idle;
    final Capacity<K, V> capacity;
    final Disposals<K, V> disposals;
    final Attacher<K, V> attacher;
    private final Acquirer<K, V> acquirer;

    private final Calls<K, V> calls;
    final LifecycleControl<K, V> control;
    private final PoolReadings readings;
    /** Whether {@code Handle.get()} checks that its thread may use the object. */
    final boolean strictAccess;

    private final CancellationSource closing = new CancellationSource();
    private final AtomicInteger lifecycle = new AtomicInteger(OPEN);
    /** Counted down when the first close() has finished. */
    private final CountDownLatch closed = new CountDownLatch(1);
    /** The thread running the first close(), while it runs. */
    private volatile Thread closer;

    private volatile PoolHooks hooks;

    /** The pool's name: in messages, JFR events and drainer thread names. */
    private final String name;

    /** Builds a pool from settings the public builder validated. */
    public PoolCore(PoolSettings<K, V> config) {
        this.name = config.name();
        this.attachMode = config.attachMode();
        this.errors = config.errors();
        this.leaks = new LeakTracker(this, config.leakDetection(), config.leakSampleInterval());
        this.untracked = config.leakDetection() == LeakDetection.OFF;
        this.releases =
                new DeferredReleases<>(this, config.drainExecutor(), config.drainDelayNanos(), config.drainThreshold());
        this.slots = new SlotTable<>(this, config.factory());
        this.idle = config.idle() == null ? null : new IdleTier<>(this, config.idle());
        this.capacity = new Capacity<>(this, config.maxObjects());
        this.disposals = new Disposals<>(this, config.disposer());
        this.attacher = new Attacher<>(this, config.attachMode());
        this.acquirer = new Acquirer<>(this);
        this.strictAccess = config.strictAccess();
        this.calls = new Calls<>(this, config.callFunctions());
        this.control = new LifecycleControl<>(this);
        this.readings = new PoolReadings(this);
    }

    // ---------------------------------------------------------------- wiring and lifecycle

    public AttachMode attachMode() {
        return attachMode;
    }

    /** {@return the release queue}, for tests of its protocol */
    public ReleaseQueue<?> releaseQueue() {
        return releases.queue();
    }

    LeakTracker leakTracker() {
        return leaks;
    }

    CancellationToken closingToken() {
        return closing.token();
    }

    public boolean isClosed() {
        return lifecycle.get() != OPEN;
    }

    /** {@return "{@code operation} on closed pool 'name'"}, the message of a call refused after close */
    String onClosedPool(String operation) {
        return operation + " on closed pool '" + name + "'";
    }

    /** {@return the pool's name}, as the builder set it or a generated one */
    public String name() {
        return name;
    }

    void checkOpen(String operation) {
        if (lifecycle.get() != OPEN) {
            throw new PoolClosedException(onClosedPool(operation));
        }
    }

    public boolean isAttached() {
        return attacher.state().depth > 0;
    }

    /**
     * {@return the calling thread's attach state of this pool and its disposal work list}, for
     * tests of what a thread keeps of a pool; creates the state if the thread has none
     */
    public Object[] threadStateForTests() {
        AttachState s = attacher.state();
        return new Object[] {s, s.disposals};
    }

    /** Installs the test seam; {@code null} turns it off. */
    public void setHooks(PoolHooks hooks) {
        this.hooks = hooks;
    }

    void hook(PoolHooks.Point point) {
        PoolHooks h = hooks;
        if (h != null) {
            h.at(point);
        }
    }

    // ---------------------------------------------------------------- attach

    public Attachment attach(CancellationToken token) {
        refuseCancelled(token, "attach");
        return attacher.attach(token, false, false);
    }

    public Attachment exclusive(CancellationToken token) {
        refuseCancelled(token, "exclusive");
        return attacher.attach(token, true, false);
    }

    /** {@code attach(Duration)} and {@code exclusive(Duration)}: the gate within {@code timeout}. */
    public Attachment attachWithin(Duration timeout, boolean exclusive) {
        return attacher.attach(CancellationToken.none(), Timeouts.positive(timeout), exclusive, false);
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
    public Calls<K, V> calls() {
        return calls;
    }

    // ---------------------------------------------------------------- acquire

    /**
     * The attached acquire. For an attached thread of a pool without leak detection it is a call
     * for the reference ({@link Acquirer#retain}) and the path's only handle, small enough for the
     * JIT to inline into the caller, where it can remove the handle of an acquire that is closed in
     * the same method; everything else is {@link Acquirer#acquireAttached}.
     */
    public Handle<V> acquire(K key) {
        AttachState s = attacher.state();
        if (key != null && s.depth > 0 && untracked) {
            return new PooledHandle<>(this, acquirer.retain(key, s), s);
        }
        return acquirer.acquireAttached(key, s);
    }

    /**
     * {@return a new reference to the live or idle object of {@code key}, with no handle}, or
     * {@code null} if there is none (being created, absent, disposed) or the pool is closing. For an attached caller
     * that releases it itself ({@link Calls#call}).
     */
    Entry<K, V> retainExisting(K key) {
        if (lifecycle.get() == OPEN) {
            Entry<K, V> entry = slots.entry(key);
            if (entry != null) {
                int before = entry.tryRetain();
                if (before >= 0) {
                    if (before == 0) {
                        revived(entry);
                    }
                    return entry;
                }
            }
        }
        return null;
    }

    public CompletionStage<Handle<V>> acquireAsync(K key, CancellationToken token) {
        return acquirer.acquireAsync(key, token);
    }

    /** {@code acquireAsync(key, timeout)}: see {@link Acquirer#acquireAsyncWithin}. */
    public CompletionStage<Handle<V>> acquireAsync(K key, Duration timeout) {
        return acquirer.acquireAsyncWithin(key, timeout);
    }

    CompletionStage<Handle<V>> acquireWithPermit(K key, CancellationToken token, io.refpool.sync.Guard permit) {
        return acquirer.acquireWithPermit(key, token, permit);
    }

    /** An acquire took an idle object back (count 0 to 1); the cache keeps its entry (see IdleTier). */
    void revived(Entry<K, V> entry) {
        counters.idleHits.increment();
    }

    /** {@return a new handle to {@code entry}, whose reference the caller already took} */
    PooledHandle<K, V> newHandle(Entry<K, V> entry, AttachState opener) {
        return untracked ? new PooledHandle<>(this, entry, opener) : leaks.newHandle(this, entry, opener);
    }

    // ---------------------------------------------------------------- release

    /** A handle's close: now if attached, otherwise deferred. */
    void release(Entry<K, V> entry, AttachState opener) {
        AttachState s = opener != null && opener.thread == Thread.currentThread() ? opener : attacher.state();
        if (s.depth == 0) {
            releases.enqueue(entry);
        } else {
            releaseAttached(entry, s);
        }
    }

    /** Gives back a reference of {@code entry} on a thread that is attached ({@code s.depth > 0}). */
    void releaseAttached(Entry<K, V> entry, AttachState s) {
        int after;
        try {
            after = entry.release();
        } catch (Entry.DoubleRelease e) { // the pool's defect: reported, never thrown at the handle's caller
            report(PoolError.Kind.REFCOUNT_DOUBLE_RELEASE, entry.key, e.getMessage(), e);
            return;
        }
        if (after == 0) {
            capacity.reachedZero(entry, s);
        }
    }

    void report(PoolError.Kind kind, Object key, String message, Throwable cause) {
        PoolError error = new PoolError(kind, key, message, cause);
        try {
            errors.onError(error);
        } catch (Throwable listenerFailure) {
            LOGGING_LISTENER.onError(
                    new PoolError(kind, key, "the error listener failed on: " + message, listenerFailure));
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
     * Closes the pool. A close called while another thread's close is running waits for it to
     * finish, so that whichever returns first, the pool is closed; unless the calling thread is
     * attached to this pool or is running that close (a disposer, say), where waiting would wait
     * for itself: then it returns at once.
     */
    public void close() {
        if (!lifecycle.compareAndSet(OPEN, CLOSING)) {
            if (closer != Thread.currentThread() && !isAttached()) {
                awaitClosed();
            }
            return;
        }
        closer = Thread.currentThread();
        try {
            failWaitersDrainAndDispose();
        } finally {
            lifecycle.set(CLOSED);
            closer = null;
            closed.countDown(); // even if the close failed: a second close() must not wait forever
            attacher.forgetThread(); // the closing thread keeps no state of a closed pool
        }
    }

    private void failWaitersDrainAndDispose() {
        try {
            closing.cancel();
        } catch (RuntimeException | Error e) {
            report(PoolError.Kind.CLOSE_CANCELLATION_FAILED, null, "failing the pool's waiters at close failed", e);
        }
        Attachment attached =
                attacher.attach(CancellationToken.none(), attachMode != AttachMode.EXCLUSIVE && !isAttached(), true);
        try {
            AttachState s = attacher.state();
            releases.applyAll(s); // also releases whose flag is still in flight
            if (idle != null) {
                idle.clear(); // EXPLICIT: the loop below disposes what was idle
            }
            disposals.batch(
                    s,
                    () -> slots.forEachEntry(entry -> {
                        if (entry.tryDispose(DisposalCause.CLOSED)) {
                            s.disposals.add(entry);
                        }
                    }));
            leaks.reportOpenAtClose(slots);
        } finally {
            attached.close();
        }
    }

    private void awaitClosed() {
        boolean interrupted = false;
        for (; ; ) {
            try {
                closed.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // close() is not interruptible; the flag is restored below
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    public PoolStats stats() {
        return counters.snapshot(slots, releases.queue().volatileSize(), capacity.waiters());
    }
}
