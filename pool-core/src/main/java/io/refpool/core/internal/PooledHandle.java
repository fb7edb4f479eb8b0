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
 * A handle: one reference to an {@link Entry}, or one borrow of a thread's {@link Lease} on it.
 *
 * <p>{@code closed} goes from false to true once, under this handle's monitor, so a second close —
 * from any thread — never decrements again. A monitor rather than a CAS: the JIT elides the monitor
 * of a handle that does not escape its caller (acquire, use, close in one compiled method), and can
 * then remove the handle altogether, which it will not do for the target of a CAS. The monitor is
 * held for the flag flip only.
 *
 * <p>The handle remembers the attach state of the thread that opened it, so a close on that
 * thread (the common case) finds out whether it is attached without a thread-local lookup.
 *
 * <p>In a pool with thread leases an attached acquire's handle borrows from its thread's {@link
 * Lease} and gives the borrow back on close. It is the same class, made at the same place ({@link
 * #on}): one class and one allocation site for every attached acquire, so the JIT binds {@link
 * #close()} as if this class were final and has one handle to remove.
 */
class PooledHandle<K, V> implements Handle<V> {
    final Handles<K, V> handles;
    final Entry<K, V> entry;
    /** The leak detector's record of this handle, or {@code null} when it is not tracked. */
    private final LeakTracker.Tracked tracked;
    /** The attach state of the opening thread, or {@code null} if not known. */
    final AttachState opener;
    /**
     * The observer's record of this handle (timings, held too long), or {@code null}; dropped by
     * {@link #unobserved} on the opening thread before the handle is seen by anyone else.
     */
    private Observer.Hold hold;
    /**
     * The {@link Lease} this handle borrowed from, or {@code null}: it holds a reference of its own.
     * Typed {@code Object}, so that no signature here names the class of leases, which a JVM whose
     * pools lease nothing never loads (see the constructor).
     */
    private final Object lease;

    /**
     * Written under this handle's monitor; volatile so other threads see a close at once. Starts
     * false, unwritten: a volatile store in the constructor would fence it, and then the JIT could no
     * longer write the other fields as a new object's (without the garbage collector's barriers),
     * which makes the acquire's compiled code big enough to stop being inlined.
     */
    volatile boolean closed;

    /**
     * An untracked handle, borrowing from {@code lease} unless it is {@code null}. Its signature names
     * no class of leak detection or of leases, which are never loaded while those are off: the JIT
     * does not inline a constructor whose signature names an unloaded class, and a handle whose
     * constructor is not inlined cannot be scalar-replaced.
     */
    private PooledHandle(Handles<K, V> handles, Entry<K, V> entry, Object lease, AttachState opener) {
        this.handles = handles;
        this.entry = entry;
        this.tracked = null;
        this.opener = opener;
        this.hold = null;
        this.lease = lease;
    }

    /**
     * {@return an untracked handle on {@code reference}}: an {@link Entry} whose reference the caller
     * took, or a {@link Lease} it borrowed from. The acquire's one allocation site. Every argument is
     * computed before the {@code new}: with a branch or a call between the allocation and the
     * constructor, the JIT writes the fields as an old object's, with the garbage collector's
     * barriers, and the compiled acquire grows past the size it is still inlined at.
     */
    @SuppressWarnings("unchecked")
    static <K, V> PooledHandle<K, V> on(Handles<K, V> handles, Object reference, AttachState opener) {
        Entry<K, V> entry = reference instanceof Entry ? (Entry<K, V>) reference : Lease.entryOf(reference);
        Object lease = entry == reference ? null : reference;
        return new PooledHandle<>(handles, entry, lease, opener);
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
        this.lease = null;
    }

    /**
     * The pool itself uses this handle inside a call it observes as a call ({@code call(key, timeout,
     * fn)}): the handle is not watched or timed as one. Called by the thread that opened it, before
     * the handle is used.
     */
    void unobserved() {
        Observer.Hold h = hold;
        if (h != null) {
            hold = null;
            handles.forget(h);
        }
    }

    private void checkOpen(String operation) {
        if (closed) {
            throw new IllegalStateException(operation + " on the handle for key " + Keys.describe(entry.key)
                    + " of pool '" + handles.name() + "', which is already closed");
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
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("sectionAsync() on the handle for key "
                    + Keys.describe(entry.key) + " of pool '" + handles.name() + "', which is already closed"));
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
        return !closed;
    }

    @Override
    public Object key() {
        return entry.key;
    }

    /**
     * Closes the handle. No call here or in what it inlines takes the handle itself: the JIT removes
     * an untracked handle opened and closed in one compiled method only if nothing it cannot see into
     * is passed the handle, and the rare paths below (a tracked handle, a second close) are compiled
     * in wherever another pool in the JVM takes them.
     */
    @Override
    public void close() {
        boolean again;
        synchronized (this) {
            again = closed;
            if (!again) {
                if (tracked != null) {
                    tracked.closing(); // a second close, which takes this lock next, finds the first's site
                }
                closed = true;
            }
        }
        if (again) {
            closedAgain(handles, entry, tracked); // after the lock: the listener and the key's toString run
            return;
        }
        if (lease != null) { // untracked: the borrow goes back to the lease
            handles.giveBack(lease, opener);
            return;
        }
        if (tracked != null) {
            tracked.closed();
            Reference.reachabilityFence(this); // the cleaner must not run before closed() is recorded
        }
        if (hold != null) {
            handles.closed(hold);
        }
        handles.releaseFromHandle(entry, opener);
    }

    private static void closedAgain(Handles<?, ?> handles, Entry<?, ?> entry, LeakTracker.Tracked tracked) {
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
