package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The edge where references become handles and come back: a {@link PooledHandle} is made here, once,
 * where the API returns one, and a reference given back goes through {@link #release}, applied at
 * once on an attached thread and deferred on any other.
 *
 * <pre>
 *   reference        to                  by
 *   retained         handle              {@link #newHandle}: tracked by the leak detector if its mode
 *                                        picks it
 *   held             released now        {@link #releaseAttached}: a plain decrement; at 0,
 *                                        {@link EndOfLife#reachedZero}
 *   held             pending             {@link #release} off-attachment: queued for the next attach
 *                                        or the drainer ({@link DeferredReleases})
 * </pre>
 */
final class Handles<K, V> {
    private static final MethodHandle RELEASE_OUT_OF_LINE;

    static {
        try {
            RELEASE_OUT_OF_LINE = MethodHandles.lookup()
                    .findVirtual(
                            Handles.class,
                            "releaseOutOfLine",
                            MethodType.methodType(void.class, Entry.class, AttachState.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final PoolState pool;
    private final Attacher<K, V> attacher;
    private final DeferredReleases<K, V> releases;
    private final EndOfLife<K, V> endOfLife;
    /** Retires a held object: {@code Handle.invalidate()}. */
    private final LifecycleControl<K, V> control;
    /** The interrupter and section hooks, or {@code null} if neither is set. */
    final RunControl<K, V> runs;

    private final LeakTracker leaks;
    /** Timings and the held-too-long check, or {@code null}: both off. */
    private final Observer observer;
    /** Where durations go, or {@code null}: timings off. */
    private final PoolTimings timings;
    /** Leak detection and the observer are off: no handle is tracked. */
    private final boolean untracked;
    /** Whether {@code Handle.get()} checks that its thread may use the object. */
    final boolean strictAccess;

    private final AttachMode attachMode;
    /** {@link #releaseOutOfLine}; a field, not a constant, see {@link #releaseFromHandle}. */
    private final MethodHandle releaseOutOfLine = RELEASE_OUT_OF_LINE;
    /** The limit of a wait for a section given none, or {@code null}. */
    final Duration defaultWait;
    /** Thread leases, or {@code null}: off. */
    private final Leases<K, V> leases;

    Handles(
            PoolState pool,
            Attacher<K, V> attacher,
            DeferredReleases<K, V> releases,
            EndOfLife<K, V> endOfLife,
            LifecycleControl<K, V> control,
            RunControl<K, V> runs,
            LeakTracker leaks,
            Observer observer,
            boolean strictAccess,
            AttachMode attachMode,
            Duration defaultWait,
            Leases<K, V> leases) {
        this.defaultWait = defaultWait;
        this.leases = leases;
        this.pool = pool;
        this.attacher = attacher;
        this.releases = releases;
        this.endOfLife = endOfLife;
        this.control = control;
        this.runs = runs;
        this.leaks = leaks;
        this.observer = observer;
        this.timings = observer == null ? null : observer.timings;
        this.untracked = !leaks.tracks() && observer == null;
        this.strictAccess = strictAccess;
        this.attachMode = attachMode;
    }

    /** {@return a new handle to {@code entry}, whose reference the caller already took} */
    PooledHandle<K, V> newHandle(Entry<K, V> entry, AttachState opener) {
        return untracked ? PooledHandle.on(this, entry, opener) : trackedHandle(entry, opener);
    }

    /** A handle tracked by the leak detector (if its mode picks it) or observed (if on). */
    private PooledHandle<K, V> trackedHandle(Entry<K, V> entry, AttachState opener) {
        Observer.Hold hold = null;
        if (observer != null) {
            try {
                hold = observer.open(entry.key, "a handle");
            } catch (Throwable e) { // the caller already took its reference: the handle goes unobserved
                pool.report(PoolError.Kind.HELD_TOO_LONG, entry.key, "observing a handle failed", e);
            }
        }
        Observer.Hold observed = hold;
        Observer watching = observer;
        return leaks.tracks()
                ? leaks.newHandle(
                        entry,
                        observed == null ? null : () -> watching.leaked(observed),
                        tracked -> new PooledHandle<>(this, entry, tracked, opener, observed))
                : new PooledHandle<>(this, entry, null, opener, observed);
    }

    /** A handle observed since {@code hold} began was closed. */
    void closed(Observer.Hold hold) {
        observer.closed(hold);
    }

    /** The handle of {@code hold} is not watched or timed any more: {@link PooledHandle#unobserved}. */
    void forget(Observer.Hold hold) {
        observer.forget(hold);
    }

    /**
     * The section of a call made with a handle ({@code call(key, timeout, fn)}) was taken after a
     * wait begun at {@code begun} (from {@link #clock}), which the section recorded itself: told to
     * {@code fn} if it is an observed call, whose wait for the object it is not part of.
     */
    void sectionWaitTold(long begun, Object fn) {
        if (timings != null && fn instanceof Observer.Observed call) {
            call.sectionWaited(System.nanoTime() - begun);
        }
    }

    /** {@return {@code System.nanoTime()} if timings are on, else 0 (and no clock read)} */
    long clock() {
        return timings == null ? 0 : System.nanoTime();
    }

    /** A section was taken after a wait begun at {@code begun} (from {@link #clock}); recorded if timings are on. */
    void sectionWaited(long begun) {
        if (timings != null) {
            timings.since(PoolTimings.Timing.SECTION_WAIT, begun);
        }
    }

    /**
     * A section was taken for {@code fn} after a wait begun at {@code begun} (from {@link #clock});
     * recorded if timings are on, and told to {@code fn} if it is an observed call ({@link Observer.Observed}), whose wait for
     * the object it is not part of.
     */
    void sectionWaited(long begun, Object fn) {
        if (timings != null) {
            long waited = System.nanoTime() - begun;
            timings.record(PoolTimings.Timing.SECTION_WAIT, waited);
            if (fn instanceof Observer.Observed call) {
                call.sectionWaited(waited);
            }
        }
    }

    /**
     * {@code fn} in the section of {@code entry}, the section wait timed (timings on): {@code Calls}
     * and {@code Handle.call} in {@code PER_OBJECT} mode. An observed call ({@link Observer.Observed})
     * learns the wait, which is not part of its wait for the object.
     */
    <T, E extends Exception> T applyTimed(Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn) throws E {
        long begun = System.nanoTime();
        Section section = entry.section();
        Guard lockGuard =
                defaultWait == null ? section.enter(entry, pool) : section.enterWithin(entry, defaultWait, pool);
        sectionWaited(begun, fn);
        try {
            return fn.apply(entry.value);
        } finally {
            section.unlock(lockGuard);
        }
    }

    /** {@return whether calls in {@code PER_OBJECT} mode go through {@link #applyTimed}} */
    boolean timesSections() {
        return timings != null;
    }

    /** A handle's close: now if attached, otherwise deferred. */
    void release(Entry<K, V> entry, AttachState opener) {
        AttachState s = stateOf(opener);
        if (s.depth == 0) {
            releases.enqueue(entry);
        } else {
            releaseAttached(entry, s);
        }
    }

    /**
     * {@link #release} for {@code Handle.close()}: the same, but a detached close and a zero
     * crossing are called through a method handle held in a field, which C2 does not inline. So a
     * compiled {@code close()} holds a decrement and a call, and stays small: C2 does not inline a
     * method that it already compiled on its own into a big one ("already compiled into a big
     * method"), and a {@code close()} left out of its caller lets the handle escape, which then
     * costs an allocation per acquire wherever that caller runs ({@code AcquireAllocationTest}).
     */
    void releaseFromHandle(Entry<K, V> entry, AttachState opener) {
        AttachState s = stateOf(opener);
        if (s.depth > 0 && decrement(entry) != 0) {
            return; // attached, and the object still held (or a double release, reported)
        }
        try {
            releaseOutOfLine.invokeExact(this, entry, s);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable checked) { // releaseOutOfLine declares none
            throw new IllegalStateException(checked);
        }
    }

    /**
     * {@code Handle.close()} of a handle that borrowed from its opening thread's {@code lease} (a
     * {@link Lease}, typed as the handle holds it).
     */
    @SuppressWarnings("unchecked")
    void giveBack(Object lease, AttachState opener) {
        Lease<K, V> borrowed = (Lease<K, V>) lease;
        if (borrowed.giveBack()) { // the lease was revoked, and this was its last borrow
            leases.ended(borrowed, stateOf(opener));
        }
    }

    /** {@link #releaseFromHandle} detached (deferred) or at zero. */
    @SuppressWarnings("unused") // called through RELEASE_OUT_OF_LINE
    private void releaseOutOfLine(Entry<K, V> entry, AttachState s) {
        if (s.depth == 0) {
            releases.enqueue(entry);
        } else {
            endOfLife.reachedZero(entry, s);
        }
    }

    /** Gives back a reference of {@code entry} on a thread that is attached ({@code s.depth > 0}). */
    void releaseAttached(Entry<K, V> entry, AttachState s) {
        if (decrement(entry) == 0) {
            endOfLife.reachedZero(entry, s);
        }
    }

    /** {@return the count after giving back one reference, or -1 if there was none to give (reported)} */
    private int decrement(Entry<K, V> entry) {
        try {
            return entry.release();
        } catch (Entry.DoubleRelease e) { // the pool's defect: reported, never thrown at the handle's caller
            pool.report(PoolError.Kind.REFCOUNT_DOUBLE_RELEASE, entry.key, e.getMessage(), e);
            return -1;
        }
    }

    /**
     * {@code Handle.call}: {@code fn} on the object of {@code entry}, attached and, in {@code
     * PER_OBJECT} mode, in the object's section, with a reference of its own taken while the handle
     * holds one (an {@code IllegalStateException} if another thread closed it meanwhile).
     */
    <T, E extends Exception> T call(Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn) throws E {
        AttachState s = attacher.enterClosure("call", entry.key);
        int level = s.depth;
        try {
            // a reference of the call's own, as a section's: a close of the handle meanwhile (on
            // another thread while this waits for the section, or by fn itself) never disposes the
            // object under fn or its section's leave hook
            entry.retainForHolder("call()");
            try {
                return applyHeld(entry, fn);
            } finally {
                releaseAttached(entry, s);
            }
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /** {@code fn} on the object of {@code entry}, which the caller keeps: in its section, in {@code PER_OBJECT} mode. */
    private <T, E extends Exception> T applyHeld(Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn)
            throws E {
        if (attachMode != AttachMode.PER_OBJECT) {
            return runs == null ? fn.apply(entry.value) : runs.apply(entry, fn, CancellationToken.none(), null, 0L);
        }
        if (runs != null) {
            return Section.applyHooked(this, entry, fn, defaultWait, runs);
        }
        if (timings != null) {
            return applyTimed(entry, fn);
        }
        return defaultWait == null ? Section.apply(entry, fn, pool) : Section.apply(entry, fn, defaultWait, pool);
    }

    /** {@code Handle.invalidate()}: retires exactly the object of {@code entry}. */
    boolean invalidate(Entry<K, V> entry) {
        return control.retireHeld(entry);
    }

    /**
     * {@code work}, a wait for a section: with the calling thread's attachment suspended if it holds
     * a {@code GLOBAL} pool's gate ({@link Attacher#yieldsGate}), otherwise as it is.
     */
    <T> T waitForSection(Supplier<T> work) {
        AttachState s = attacher.state();
        return attacher.yieldsGate(s) ? attacher.suspended(s, work) : work.get();
    }

    AttachState state() {
        return attacher.state();
    }

    /**
     * {@return the calling thread's attach state, read from {@code opener} (the state of the thread
     * that opened a handle) when that is this thread's and attached, which saves the thread-local
     * lookup} A detached opener is not trusted: a thread's state is a thread-local, and a pool
     * thread that clears its thread-locals between tasks (the common fork-join pool does) has a new
     * one in its next task, while a handle opened in an earlier task still holds the old one. An
     * attached state cannot be stale that way, as a task ends its attachments before it returns.
     */
    AttachState stateOf(AttachState opener) {
        return opener != null && opener.thread == Thread.currentThread() && opener.depth > 0
                ? opener
                : attacher.state();
    }

    boolean isAttached() {
        return attacher.state().depth > 0;
    }

    boolean isClosed() {
        return pool.isClosed();
    }

    String name() {
        return pool.name();
    }

    AttachMode attachMode() {
        return attachMode;
    }

    void report(PoolError.Kind kind, Object key, String message, Throwable cause) {
        pool.report(kind, key, message, cause);
    }
}
