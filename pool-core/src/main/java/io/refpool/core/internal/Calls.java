package io.refpool.core.internal;

import io.refpool.core.AttachMode;
import io.refpool.core.AttachedWork;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.PoolBiFunction;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolFunction;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.time.Duration;
import java.util.Objects;

/**
 * The closure API, blocking: attach, acquire, take the section in {@code PER_OBJECT} mode, run, and
 * release everything in reverse order, also when the function throws. {@link AsyncCalls} is the
 * same without a parked thread.
 *
 * <pre>
 *   step   blocking call                         by
 *   1      attach (nested ok)                    {@link Attacher#enterClosure}
 *   2      acquire: live, idle, created          {@link Acquirer#retainExisting}, {@link Acquirer#acquireEntry}
 *   3      section (PER_OBJECT)                  {@link Section#apply}
 *   4      run fn, then release 3, 2, 1          {@link Handles#releaseAttached}, {@link Attacher#exitClosure}
 * </pre>
 *
 * <p>The order is the deadlock rule of sections: a section is waited for only while the gate is
 * held (attached), and a section holder never waits for the gate (in {@code GLOBAL} mode, where a
 * holder may give the gate up for a factory, a section is waited for with the gate given up
 * instead). So a stop-the-world
 * {@code pool.stopTheWorld()} waits for section holders to finish, never the reverse. Two sections
 * are taken in the objects' creation order ({@link Entry#order}), whatever order the caller names
 * the keys in.
 */
public final class Calls<K, V> {
    private final PoolState pool;
    private final Attacher<K, V> attacher;
    private final Acquirer<K, V> acquirer;
    private final Handles<K, V> handles;
    private final boolean sections;
    /** The interrupter and section hooks, or {@code null} if neither is set. */
    private final RunControl<K, V> runs;
    /** Thread leases, or {@code null}: off. */
    private final Leases<K, V> leases;

    Calls(
            PoolState pool,
            Attacher<K, V> attacher,
            Acquirer<K, V> acquirer,
            Handles<K, V> handles,
            Leases<K, V> leases) {
        this.leases = leases;
        this.pool = pool;
        this.attacher = attacher;
        this.acquirer = acquirer;
        this.handles = handles;
        this.sections = handles.attachMode() == AttachMode.PER_OBJECT;
        this.runs = handles.runs;
    }

    public <T, E extends Exception> T attached(AttachedWork<? extends T, E> work) throws E {
        Objects.requireNonNull(work, "work");
        AttachState s = attacher.enterClosure("attached()");
        int level = s.depth;
        try {
            return work.get();
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /**
     * The blocking call. The path for a live or idle object (a reference taken without a handle,
     * which nobody sees) is kept small so that the JIT inlines it into the caller with the
     * function; a creation or a wait is {@link #callAcquiring}.
     */
    public <T, E extends Exception> T call(K key, PoolFunction<? super V, ? extends T, E> fn) throws E {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(fn, "fn");
        AttachState s = attacher.enterClosure("call", key);
        int level = s.depth;
        try {
            if (leases != null) {
                return callLeasing(key, fn, s);
            }
            Entry<K, V> entry = acquirer.retainExisting(key, s);
            if (entry == null) {
                return callAcquiring(key, fn, s);
            }
            try {
                return apply(entry, fn);
            } finally {
                handles.releaseAttached(entry, s); // attached: applied at once
            }
        } finally {
            attacher.exitClosure(s, level);
        }
    }

    /**
     * {@link #call} with thread leases: a borrow of the thread's lease on the key's object, or an
     * ordinary acquire whose reference may become a new lease.
     */
    private <T, E extends Exception> T callLeasing(K key, PoolFunction<? super V, ? extends T, E> fn, AttachState s)
            throws E {
        Lease<K, V> lease = leases.borrow(key, s);
        if (lease == null) {
            Entry<K, V> entry = acquirer.retainExisting(key, s);
            if (entry == null) {
                entry = acquirer.acquireEntry(key, s);
            }
            lease = leases.adopt(entry, s);
            if (lease == null) {
                return applyReleasing(entry, fn, s);
            }
        }
        try {
            return apply(lease.entry, fn);
        } finally {
            leases.giveBack(lease, s); // attached: a lease it ends gives its reference back at once
        }
    }

    /** {@link #call} of a key with no live or idle object: revive, create, or wait for a creation. */
    private <T, E extends Exception> T callAcquiring(K key, PoolFunction<? super V, ? extends T, E> fn, AttachState s)
            throws E {
        return applyReleasing(acquirer.acquireEntry(key, s), fn, s);
    }

    /** {@link #apply}, then the caller's reference to {@code entry} given back, attached. */
    private <T, E extends Exception> T applyReleasing(
            Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn, AttachState s) throws E {
        try {
            return apply(entry, fn);
        } finally {
            handles.releaseAttached(entry, s);
        }
    }

    /** Runs {@code fn} on the object of {@code entry}, which the caller holds, in its section if the mode says so. */
    private <T, E extends Exception> T apply(Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn) throws E {
        if (runs != null) {
            return applyControlled(entry, fn, handles.defaultWait, null, 0L);
        }
        if (!sections) {
            return fn.apply(entry.value);
        }
        if (handles.timesSections()) {
            return handles.applyTimed(entry, fn);
        }
        return handles.defaultWait == null
                ? Section.apply(entry, fn, pool)
                : Section.apply(entry, fn, handles.defaultWait, pool);
    }

    /**
     * {@link #apply} with the pool's {@link RunControl}: the section (within {@code wait} if not
     * null) and its hooks, and the function marked running for the interrupter, timed to {@code
     * deadlineNanos} if {@code limit} (the call's) is not null. The order: section taken, enter, fn, the interrupter settled
     * (waited for if it started, its outcome applied), leave, section released.
     */
    private <T, E extends Exception> T applyControlled(
            Entry<K, V> entry,
            PoolFunction<? super V, ? extends T, E> fn,
            Duration wait,
            Duration limit,
            long deadlineNanos)
            throws E {
        if (!sections) {
            return runControlled(entry, fn, limit, deadlineNanos);
        }
        Section section = entry.section();
        long begun = handles.clock();
        Guard lockGuard = wait == null ? section.enter(entry, pool) : section.enterWithin(entry, wait, pool);
        handles.sectionWaited(begun, fn);
        try {
            runs.enter(entry); // a failure: the section is released below, and the call fails with it
            try {
                return runControlled(entry, fn, limit, deadlineNanos);
            } finally {
                runs.leave(entry);
            }
        } finally {
            section.unlock(lockGuard);
        }
    }

    /** Runs {@code fn} marked running for the interrupter, if the pool has one. */
    private <T, E extends Exception> T runControlled(
            Entry<K, V> entry, PoolFunction<? super V, ? extends T, E> fn, Duration limit, long deadlineNanos)
            throws E {
        return runs.apply(entry, fn, CancellationToken.none(), limit, deadlineNanos);
    }

    /**
     * Runs {@code work} in the section of {@code entry}, which a reference of the caller keeps
     * alive: it takes no reference and allocates no guard. The wait is told to {@code fn}, the
     * call's function, if timings are on.
     */
    private <T, E extends Exception> T inSection(Entry<K, V> entry, Object fn, AttachedWork<T, E> work) throws E {
        Section section = entry.section();
        long begun = handles.clock();
        Guard lockGuard = handles.defaultWait == null
                ? section.enter(entry, pool)
                : section.enterWithin(entry, handles.defaultWait, pool);
        handles.sectionWaited(begun, fn);
        try {
            if (runs == null) {
                return work.get();
            }
            runs.enter(entry);
            try {
                return work.get();
            } finally {
                runs.leave(entry);
            }
        } finally {
            section.unlock(lockGuard);
        }
    }

    public <T, E extends Exception> T call(K first, K second, PoolBiFunction<? super V, ? extends T, E> fn) throws E {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(second, "second");
        Objects.requireNonNull(fn, "fn");
        boolean oneKey = first.equals(second); // before anything is taken: a key that throws changes nothing
        if (pool.isClosed()) {
            throw new PoolClosedException(
                    pool.onClosedPool("call(" + Keys.describe(first) + ", " + Keys.describe(second) + ")"));
        }
        Attachment attachment = attacher.attach(CancellationToken.none(), false, false);
        try {
            AttachState s = attacher.state();
            Entry<K, V> a = acquirer.acquireEntry(first, s);
            if (oneKey) { // one object, acquired once: an invalidate between two acquires would make two
                try {
                    return runBoth(a, a, fn);
                } finally {
                    handles.releaseAttached(a, s);
                }
            }
            try {
                Entry<K, V> b = acquirer.acquireEntry(second, s);
                try {
                    return runBoth(a, b, fn);
                } finally {
                    handles.releaseAttached(b, s);
                }
            } finally {
                handles.releaseAttached(a, s);
            }
        } finally {
            attacher.closeAround(attachment); // with what fn left open inside
        }
    }

    private <T, E extends Exception> T runBoth(
            Entry<K, V> a, Entry<K, V> b, PoolBiFunction<? super V, ? extends T, E> fn) throws E {
        if (!sections) {
            return runControlled(a, b, fn);
        }
        if (a == b) { // one object named twice: one section
            return inSection(a, fn, () -> runControlled(a, b, fn));
        }
        boolean aFirst = a.order < b.order;
        Entry<K, V> outer = aFirst ? a : b;
        Entry<K, V> inner = aFirst ? b : a;
        // holding the inner section while waiting for the outer one could wait for a thread that
        // holds the outer and waits for the inner: refused before any wait, as holding the outer is
        inner.section().refuseHeldByThisThread(inner, pool);
        return inSection(outer, fn, () -> inSection(inner, fn, () -> runControlled(a, b, fn)));
    }

    /**
     * Runs {@code fn} on both objects, marked running for the interrupter if the pool has one:
     * an interrupt gives it each object once, {@code a}'s first.
     */
    private <T, E extends Exception> T runControlled(
            Entry<K, V> a, Entry<K, V> b, PoolBiFunction<? super V, ? extends T, E> fn) throws E {
        if (runs == null) {
            return fn.apply(a.value, b.value);
        }
        RunControl<K, V>.Run run = runs.started(a, a == b ? null : b, CancellationToken.none(), null, 0L);
        try {
            return fn.apply(a.value, b.value);
        } finally {
            runs.returned(run);
        }
    }

    /**
     * {@code pool.call(key, timeout, fn)} once the handle is acquired within the limit: attaches
     * and takes the section within what is left of it, then runs {@code fn}, and closes the handle
     * inside the attachment, so its release is applied at once. Without an interrupter the limit
     * bounds the waits, never the function; with one, it bounds the function too.
     */
    @SuppressWarnings({"unchecked", "try"}) // every handle this pool opens is a PooledHandle; a section held, not used
    public <T, E extends Exception> T callWithin(
            Handle<V> handle, Duration timeout, long deadlineNanos, PoolFunction<? super V, ? extends T, E> fn)
            throws E {
        Entry<K, V> entry = ((PooledHandle<K, V>) handle).entry();
        Attachment attachment;
        try {
            attachment = attacher.attach(CancellationToken.none(), left(deadlineNanos), false, false);
        } catch (Throwable t) {
            handle.close();
            throw t;
        }
        try {
            try {
                if (runs != null) {
                    return applyControlled(entry, fn, left(deadlineNanos), timeout, deadlineNanos);
                }
                if (!sections) {
                    return fn.apply(entry.value);
                }
                long begun = handles.clock();
                try (Guard section = Section.enterWithin(handles, entry, left(deadlineNanos))) {
                    handles.sectionWaitTold(begun, fn);
                    return fn.apply(entry.value);
                }
            } finally {
                handle.close(); // attached: applied at once
            }
        } finally {
            attacher.closeAround(attachment); // with what fn left open inside
        }
    }

    /** {@return what is left until {@code deadlineNanos}}, at least a nanosecond: a free resource is still taken */
    private static Duration left(long deadlineNanos) {
        return Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime()));
    }
}
