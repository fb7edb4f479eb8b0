package io.refpool.core.internal;

import io.refpool.core.Handle;
import io.refpool.core.PoolError;
import io.refpool.core.PoolFunction;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A handle: one reference to an {@link Entry}.
 *
 * <p>{@code open} goes from true to false once, under this handle's monitor, so a second close —
 * from any thread — never decrements again. A monitor rather than a CAS: the JIT elides the monitor
 * of a handle that does not escape its caller (acquire, use, close in one compiled method), and can
 * then remove the handle altogether, which it will not do for the target of a CAS. The monitor is
 * held for the flag flip only.
 *
 * <p>The handle remembers the attach state of the thread that opened it, so a close on that
 * thread (the common case) finds out whether it is attached without a thread-local lookup.
 */
class PooledHandle<K, V> implements Handle<V> {
    final Handles<K, V> handles;
    final Entry<K, V> entry;
    /** The leak detector's record of this handle, or {@code null} when it is not tracked. */
    private final LeakTracker.Tracked tracked;
    /** The attach state of the opening thread, or {@code null} if not known. */
    final AttachState opener;
    /** The observer's record of this handle (timings, held too long), or {@code null}. */
    private final Observer.Hold hold;

    /** Written under this handle's monitor; volatile so other threads see a close at once. */
    volatile boolean open = true;

    /**
     * An untracked handle. Its signature names no class of leak detection, which is never loaded
     * while detection is off: the JIT does not inline a constructor whose signature names an
     * unloaded class, and a handle whose constructor is not inlined cannot be scalar-replaced.
     */
    PooledHandle(Handles<K, V> handles, Entry<K, V> entry, AttachState opener) {
        this.handles = handles;
        this.entry = entry;
        this.tracked = null;
        this.opener = opener;
        this.hold = null;
    }

    PooledHandle(
            Handles<K, V> handles,
            Entry<K, V> entry,
            LeakTracker.Tracked tracked,
            AttachState opener,
            Observer.Hold hold) {
        this.handles = handles;
        this.entry = entry;
        this.tracked = tracked;
        this.opener = opener;
        this.hold = hold;
    }

    private void checkOpen(String operation) {
        if (!open) {
            throw new IllegalStateException(
                    operation + " on the handle for key " + Keys.describe(entry.key) + ", which is already closed");
        }
    }

    @Override
    public V get() {
        checkOpen("get()");
        if (handles.strictAccess) {
            AccessChecks.checkGet(handles, entry, opener);
        }
        return entry.value;
    }

    @Override
    public <T, E extends Exception> T call(PoolFunction<? super V, ? extends T, E> fn) throws E {
        Objects.requireNonNull(fn, "fn");
        checkOpen("call()");
        return handles.call(entry, fn);
    }

    @Override
    public boolean invalidate() {
        checkOpen("invalidate()");
        return handles.invalidate(entry);
    }

    @Override
    public Guard section() {
        return section(CancellationToken.none());
    }

    @Override
    public Guard section(CancellationToken token) {
        Objects.requireNonNull(token, "token");
        checkOpen("section()");
        handles.pool.hook(PoolHooks.Point.SECTION_CHECKED);
        return Section.enter(handles, entry, token);
    }

    @Override
    public Guard section(Duration timeout) {
        Waits.checked(timeout);
        checkOpen("section()");
        handles.pool.hook(PoolHooks.Point.SECTION_CHECKED);
        return Section.enterWithin(handles, entry, timeout);
    }

    @Override
    public CompletionStage<Guard> sectionAsync(CancellationToken token) {
        Objects.requireNonNull(token, "token");
        if (!open) {
            return CompletableFuture.failedFuture(new IllegalStateException(
                    "sectionAsync() on the handle for key " + Keys.describe(entry.key) + ", which is already closed"));
        }
        handles.pool.hook(PoolHooks.Point.SECTION_CHECKED);
        return Section.enterAsync(handles, entry, token, false, null);
    }

    /** {@return the object this handle refers to, with its count and section} */
    Entry<K, V> entry() {
        return entry;
    }

    @Override
    public Handle<V> share() {
        checkOpen("share()");
        handles.pool.hook(PoolHooks.Point.SHARE_CHECKED);
        entry.retainForHolder("share()");
        return handles.newHandle(entry, opener);
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public Object key() {
        return entry.key;
    }

    @Override
    public void close() { // LeasedHandle's differs: keep the two alike
        synchronized (this) {
            if (!open) {
                closedAgain();
                return;
            }
            open = false;
        }
        if (tracked != null) {
            untrack();
        }
        if (hold != null) {
            handles.closed(hold);
        }
        handles.releaseFromHandle(entry, opener);
    }

    private void untrack() {
        tracked.closed();
        Reference.reachabilityFence(this); // the cleaner must not run before closed() is recorded
    }

    private void closedAgain() {
        if (tracked != null && tracked.paranoid()) {
            handles.report(
                    PoolError.Kind.HANDLE_CLOSED_TWICE,
                    entry.key,
                    "the handle for key " + Keys.describe(entry.key) + " was closed again; the second close did nothing"
                            + " (the cause shows the first close)",
                    tracked.closedAgain());
        }
    }

    @Override
    public String toString() {
        return "Handle[" + Keys.describe(entry.key) + (isOpen() ? ", open" : ", closed") + "]";
    }
}
