package io.refpool.core.internal;

import io.refpool.core.Handle;
import io.refpool.core.PoolError;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A handle: one reference to an {@link Entry}. {@code open} moves 1 → 0 once, by CAS, so a second
 * close never decrements again.
 */
final class PooledHandle<K, V> implements Handle<V> {
    private static final VarHandle OPEN;

    static {
        try {
            OPEN = MethodHandles.lookup().findVarHandle(PooledHandle.class, "open", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final PoolCore<K, V> core;
    private final Entry<K, V> entry;
    /** The leak detector's record of this handle, or {@code null} when it is not tracked. */
    private final LeakTracker.Tracked tracked;

    @SuppressWarnings("unused") // accessed through OPEN
    private volatile int open;

    PooledHandle(PoolCore<K, V> core, Entry<K, V> entry, LeakTracker.Tracked tracked) {
        this.core = core;
        this.entry = entry;
        this.tracked = tracked;
        OPEN.setRelease(this, 1);
    }

    private void checkOpen(String operation) {
        if ((int) OPEN.getAcquire(this) == 0) {
            throw new IllegalStateException(
                    operation + " on the handle for key '" + entry.key + "', which is already closed");
        }
    }

    @Override
    public V get() {
        checkOpen("get()");
        return entry.value;
    }

    @Override
    public Handle<V> share() {
        checkOpen("share()");
        int before = entry.tryRetain();
        if (before < 0) {
            throw new IllegalStateException(
                    "share() on the handle for key '" + entry.key + "', whose object is disposed");
        }
        return core.newHandle(entry);
    }

    @Override
    public boolean isOpen() {
        return (int) OPEN.getAcquire(this) != 0;
    }

    @Override
    public void close() {
        if (!OPEN.compareAndSet(this, 1, 0)) {
            if (tracked != null && tracked.paranoid()) {
                core.report(
                        PoolError.Kind.HANDLE_CLOSED_TWICE,
                        entry.key,
                        "the handle for key '" + entry.key + "' was closed again; the second close did nothing"
                                + " (the cause shows the first close)",
                        tracked.closedAgain());
            }
            return;
        }
        if (tracked != null) {
            tracked.closed();
        }
        core.release(entry);
    }

    @Override
    public String toString() {
        return "Handle[" + entry.key + (isOpen() ? ", open" : ", closed") + "]";
    }
}
