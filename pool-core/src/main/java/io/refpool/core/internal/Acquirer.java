package io.refpool.core.internal;

import io.refpool.core.Attachment;
import io.refpool.core.CapacityExhaustedException;
import io.refpool.core.Handle;
import io.refpool.core.PoolClosedException;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.Registration;
import io.refpool.sync.WaitTimeoutException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The acquire paths beyond the attached fast path: the synchronous attached acquire, which waits
 * for another thread's creation detached and never for capacity, and {@code acquireAsync}, which
 * waits for the gate, a creation and capacity without parking a thread.
 *
 * <p>The async path ends its wait when the caller's token is cancelled or the caller completes the
 * returned future itself (cancel, {@code orTimeout}); a handle that arrives anyway is closed, so
 * neither a reference nor a permit is lost.
 *
 * <p>The pool's acquires ({@link #acquireTracked} and the like) record their wait as {@code
 * OBJECT_WAIT} if timings are on; with them off they read no clock and allocate nothing for it.
 */
final class Acquirer<K, V> {
    private static final MethodHandle RETAIN_FOR_HANDLE;
    private static final MethodHandle BORROW_FOR_HANDLE;
    private static final MethodHandle ACQUIRE_OUT_OF_LINE;
    private static final MethodHandle REFUSAL_OUT_OF_LINE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MethodType reference = MethodType.methodType(Object.class, Object.class, AttachState.class);
            RETAIN_FOR_HANDLE = lookup.findVirtual(Acquirer.class, "retainForHandle", reference);
            BORROW_FOR_HANDLE = lookup.findVirtual(Acquirer.class, "borrowForHandle", reference);
            ACQUIRE_OUT_OF_LINE = lookup.findVirtual(
                    Acquirer.class,
                    "acquireOutOfLine",
                    MethodType.methodType(Handle.class, Object.class, AttachState.class));
            REFUSAL_OUT_OF_LINE = lookup.findVirtual(
                    Acquirer.class,
                    "refusalOutOfLine",
                    MethodType.methodType(RuntimeException.class, Object.class, AttachState.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final PoolState pool;
    private final PoolCounters counters;
    private final SlotTable<K, V> slots;
    private final Capacity<K, V> capacity;
    private final Attacher<K, V> attacher;
    private final Handles<K, V> handles;
    /** Timings and the held-too-long check, or {@code null}: both off. */
    private final Observer observer;
    /** Whether the pool checks revived objects: then only a live object is shared here. */
    private final boolean checked;
    /** Thread leases, or {@code null}: off. */
    private final Leases<K, V> leases;
    /**
     * {@link #borrowForHandle} with thread leases, else {@link #retainForHandle}; a field, not a
     * constant, see {@link #reference}.
     */
    private final MethodHandle referenceForHandle;
    /** {@link #acquireOutOfLine}; a field, not a constant, see {@link #acquireTracked}. */
    private final MethodHandle acquireOutOfLine = ACQUIRE_OUT_OF_LINE;
    /** {@link #refusalOutOfLine}; a field, not a constant, see {@link #refusal}. */
    private final MethodHandle refusalOutOfLine = REFUSAL_OUT_OF_LINE;

    Acquirer(
            PoolState pool,
            PoolCounters counters,
            SlotTable<K, V> slots,
            Capacity<K, V> capacity,
            Attacher<K, V> attacher,
            Handles<K, V> handles,
            Observer observer,
            boolean checked,
            Leases<K, V> leases) {
        this.checked = checked;
        this.leases = leases;
        this.pool = pool;
        this.counters = counters;
        this.slots = slots;
        this.capacity = capacity;
        this.attacher = attacher;
        this.handles = handles;
        this.observer = observer;
        this.referenceForHandle = leases != null ? BORROW_FOR_HANDLE : RETAIN_FOR_HANDLE;
    }

    /**
     * {@code pool.acquire(key)} of an attached caller of a pool with leak detection or an observer
     * (its wait recorded as {@code OBJECT_WAIT} if timings are on). A real call, as {@link
     * #reference}, so that {@code PoolCore.acquire} stays small.
     *
     * <p>Its handle and the fast path's meet where {@code acquire} returns, and the JIT does not
     * remove an allocation that merges with another object there. {@code acquire} is compiled once
     * for every pool in the JVM, so where such a pool runs, the other pools' handles are real
     * objects too (40 bytes an acquire); {@code pool.call} makes none.
     */
    @SuppressWarnings("unchecked")
    Handle<V> acquireTracked(K key, AttachState s) {
        try {
            return (Handle<V>) acquireOutOfLine.invokeExact(this, (Object) key, s);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable checked) { // acquireOutOfLine declares none
            throw new IllegalStateException(checked);
        }
    }

    /**
     * {@return what {@code pool.acquire(key)} throws for a null key, a closed pool or a caller not
     * attached}: a call that returns what the caller throws, so that no handle is returned from this
     * path to merge with the fast path's (see {@link #acquireTracked}), and a real one, as {@link
     * #reference}.
     */
    RuntimeException refusal(K key, AttachState s) {
        try {
            return (RuntimeException) refusalOutOfLine.invokeExact(this, (Object) key, s);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable checked) { // refusalOutOfLine declares none
            throw new IllegalStateException(checked);
        }
    }

    @SuppressWarnings({"unchecked", "unused"}) // called through REFUSAL_OUT_OF_LINE
    private RuntimeException refusalOutOfLine(Object key, AttachState s) {
        RuntimeException refused = refused((K) key, s);
        return refused != null
                ? refused
                : new IllegalStateException("acquire(" + Keys.describe(key) + ") was refused"
                        + " with the caller attached and a key: the pool's defect");
    }

    /** {@return why an attached acquire of {@code key} may not go on}, or {@code null}: it may */
    private RuntimeException refused(K key, AttachState s) {
        if (key == null) {
            return new NullPointerException("key");
        }
        if (pool.isClosed()) {
            return new PoolClosedException(pool.onClosedPool("acquire(" + Keys.describe(key) + ")"));
        }
        if (s.depth == 0) {
            return new IllegalStateException("acquire(" + Keys.describe(key) + ") needs the calling thread attached to"
                    + " the pool: use try (Attachment attached = pool.attach()) { ... }, or acquireAsync");
        }
        return null;
    }

    @SuppressWarnings({"unchecked", "unused"}) // called through ACQUIRE_OUT_OF_LINE
    private Handle<V> acquireOutOfLine(Object key, AttachState s) {
        K k = (K) key;
        if (observer == null) {
            return handles.newHandle(acquireEntry(k, s), s);
        }
        long begun = clock();
        Handle<V> handle = handles.newHandle(acquireEntry(k, s), s);
        observer.since(PoolTimings.Timing.OBJECT_WAIT, begun);
        return handle;
    }

    /**
     * {@return a new reference to the live or idle object of {@code key}, with no handle}, or
     * {@code null} if there is none (being created, absent, disposed) or the pool is closing. For an
     * attached caller that releases it itself ({@link Calls#call}).
     */
    Entry<K, V> retainExisting(K key, AttachState s) {
        if (!pool.isClosed()) {
            Entry<K, V> entry = slots.entry(key);
            if (entry != null && (checked ? entry.retainIfLive() > 0 : entry.retainLive(counters, s) >= 0)) {
                if (!entry.isRetired()) {
                    return entry;
                }
                slots.dropRetired(entry, s); // kept its slot when retired: the slow path looks again
            }
        }
        return null; // with revive checks, an idle object too: the slow path revives it through its check
    }

    /**
     * {@return a new reference to the object of {@code key}}, with no handle: the live or idle one,
     * a new one, or the one another thread is creating, waited for detached; never waits for capacity.
     */
    @SuppressWarnings("unchecked")
    Entry<K, V> acquireEntry(K key, AttachState s) {
        RuntimeException refused = refused(key, s);
        if (refused != null) {
            throw refused;
        }
        for (; ; ) {
            Attempt attempt = slots.attempt(key, s, null);
            if (attempt instanceof Entry) {
                return (Entry<K, V>) attempt;
            }
            if (attempt instanceof Attempt.NeedsCapacity) {
                if (slots.occupied(key)) {
                    // the releases this attempt applied handed their capacity to a waiter for this
                    // very key, which created it meanwhile: share that object
                    continue;
                }
                // nothing in use may be idle, but an object another thread claimed for disposal still
                // holds its permit until its disposer returns: wait for that, then look again; not from
                // inside a disposer, whose thread another disposer's acquire may be waiting for
                Entry<K, V> inFlight = s.disposing ? null : slots.disposalInFlight();
                if (inFlight != null) {
                    slots.await(inFlight.key, inFlight.retirement, s);
                    if (pool.isClosed()) { // closed while this thread waited with the gate given up
                        throw new PoolClosedException(pool.onClosedPool("acquire(" + Keys.describe(key) + ")"));
                    }
                    continue;
                }
                throw new CapacityExhaustedException("acquire(" + Keys.describe(key) + ") needs a new object, but all "
                        + capacity.maxObjects() + " objects pool '" + pool.name()
                        + "' may hold are in use and none is idle; an"
                        + " attached acquire does not wait for capacity: use acquireAsync to wait in line");
            }
            Entry<K, V> shared = awaitShared(key, (Creation<K, V>) attempt, s);
            if (pool.isClosed()) {
                // closed while this thread waited with the gate given up, which the close neither
                // waits for nor fails: the acquire fails as one the close found waiting would
                if (shared != null) {
                    handles.release(shared, s);
                }
                throw new PoolClosedException(pool.onClosedPool("acquire(" + Keys.describe(key) + ")"));
            }
            if (shared != null) {
                return shared;
            }
        }
    }

    /** What a waiter for a creation holds in its place: the reference taken for it, or that it left. */
    private static final Object LEFT = new Object();

    /**
     * Waits for another thread's creation (or revive check) of {@code key} and shares what it made,
     * live: the reference is taken when it ends, on the thread that ends it, which still holds the
     * object. Taken once this thread is attached again it would be late: in {@code GLOBAL} mode the
     * creator's caller keeps the gate meanwhile, and its release could bring the object to zero and
     * hand its permit to another key's waiter in line, leaving this acquire without capacity.
     *
     * @return the object, a reference taken for the caller; or {@code null}: look again
     */
    @SuppressWarnings("unchecked")
    private Entry<K, V> awaitShared(K key, Creation<K, V> creation, AttachState s) {
        AtomicReference<Object> place = new AtomicReference<>();
        try {
            slots.await(
                    key,
                    creation,
                    ended -> ended.thenAccept(made -> {
                        if (made != null
                                && made.retainIfLive() > 0
                                && (made.isRetired() || !place.compareAndSet(null, made))) {
                            handles.release(made, null); // retired meanwhile, or the waiter left: it goes back
                        }
                    }),
                    s);
        } catch (Throwable t) {
            Object taken = place.getAndSet(LEFT);
            if (taken != null) {
                handles.release((Entry<K, V>) taken, s);
            }
            throw t;
        }
        return (Entry<K, V>) place.getAndSet(LEFT);
    }

    /**
     * The reference {@code PoolCore.acquire} wraps in its handle, for an attached caller of an
     * untracked pool: the live or idle object's, or a new one's ({@link Entry}); with thread leases a
     * borrow of the caller's {@link Lease} on it, or a reference that becomes a new lease if the
     * caller may make one. The path's only handle is the caller's: no path below makes one, and a
     * handle returned from here would merge with it, and the JIT does not remove an allocation that
     * merges with another object.
     *
     * <p>It is a real call. The lookup and the count inline into whatever compiles them, and with
     * them {@code acquire}'s compiled code passes the size above which C2 no longer inlines a
     * compiled method into its callers ({@code InlineSmallCode}, 2,500 bytes on x86), so the
     * caller could not remove the handle. A method handle held in a field is not a constant to the
     * JIT, which calls through it rather than inline it; {@code acquire} so stays small whatever
     * C2 compiled first, also when it was compiled on its own, called from many places.
     */
    Object reference(K key, AttachState s) {
        try {
            return (Object) referenceForHandle.invokeExact(this, (Object) key, s);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable checked) { // referenceForHandle declares none
            throw new IllegalStateException(checked);
        }
    }

    @SuppressWarnings({"unchecked", "unused"}) // called through referenceForHandle
    private Object retainForHandle(Object key, AttachState s) {
        K k = (K) key;
        Entry<K, V> entry = retainExisting(k, s);
        return entry != null ? entry : acquireEntry(k, s); // create, or wait for a creation
    }

    @SuppressWarnings({"unchecked", "unused"}) // called through referenceForHandle
    private Object borrowForHandle(Object key, AttachState s) {
        K k = (K) key;
        Lease<K, V> lease = leases.borrow(k, s);
        if (lease != null) {
            return lease;
        }
        Entry<K, V> entry = retainExisting(k, s);
        if (entry == null) {
            entry = acquireEntry(k, s); // create, or wait for a creation
        }
        lease = leases.adopt(entry, s);
        return lease != null ? lease : entry;
    }

    // ---------------------------------------------------------------- the pool's acquires, their waits timed

    /**
     * {@code pool.acquire(key, timeout)}, or the acquire of {@code pool.call(key, timeout, fn)} as
     * {@code operation} names it: {@link #acquireWithin}, its wait recorded if timings are on.
     */
    Handle<V> acquireWithinTimed(K key, Duration timeout, String operation) {
        long begun = clock();
        Handle<V> handle = acquireWithinUntimed(key, timeout, operation);
        if (begun != 0) {
            observer.since(PoolTimings.Timing.OBJECT_WAIT, begun);
        }
        return handle;
    }

    /**
     * {@code call(key, timeout, fn)}'s acquire: as {@link #acquireWithinTimed}, its wait not recorded
     * (the call's observed function records it when it starts).
     */
    Handle<V> acquireWithinUntimed(K key, Duration timeout, String operation) {
        Objects.requireNonNull(key, "key");
        Waits.checked(timeout); // at the call, before any attach
        if (pool.isClosed()) {
            throw new PoolClosedException(
                    pool.onClosedPool(operation + "(" + Keys.describe(key) + ", " + timeout + ")"));
        }
        return acquireWithin(key, timeout, operation);
    }

    /** {@code pool.acquireAsync(key, token)}: {@link #acquireAsync}, its wait recorded if timings are on. */
    CompletionStage<Handle<V>> acquireAsyncTimed(K key, CancellationToken token) {
        return timed(clock(), acquireAsync(key, token));
    }

    /** {@code pool.acquireAsync(key, timeout)}: {@link #acquireAsyncWithin}, its wait recorded if timings are on. */
    CompletionStage<Handle<V>> acquireAsyncWithinTimed(K key, Duration timeout) {
        return timed(clock(), acquireAsyncWithin(key, timeout));
    }

    /** {@return {@code System.nanoTime()} if the pool records timings, else 0 without reading the clock} */
    private long clock() {
        return observer == null || observer.timings == null ? 0 : System.nanoTime();
    }

    /** {@return {@code acquired}, its wait recorded when it completes if {@code begun} is not 0} */
    private CompletionStage<Handle<V>> timed(long begun, CompletionStage<Handle<V>> acquired) {
        return begun == 0 ? acquired : observer.objectWaited(begun, acquired);
    }

    // ---------------------------------------------------------------- waits

    /**
     * {@code acquire(key, timeout)}: {@link #acquireAsyncWithin} waited for on this thread. An
     * attached caller first takes, still attached, an object it can have without waiting (live,
     * idle, or made now); only a wait suspends its attachment, as {@code detached()} does, since the
     * releases the wait may need run attached; it is attached again, at the same depth, after.
     */
    @SuppressWarnings({"try", "unchecked"}) // the level is held, not used; an attempt's Entry is this pool's
    private Handle<V> acquireWithin(K key, Duration timeout, String operation) { // all checked by the caller
        slots.refuseWaitingForItself(key); // a factory's, validator's or disposer's own key: at once, as untimed
        AttachState s = attacher.state();
        if (s.depth == 0) {
            return Waits.await(acquireAsyncWithin(key, timeout), objectFor(key));
        }
        // no wait needed: the gate is kept (a stop's too, which a suspension would open to others);
        // a section holder is refused below whether it would wait or not, so it never depends on timing
        if (attacher.sectionHeldBy() == null) {
            Entry<K, V> now = retainExisting(key, s);
            if (now == null && slots.attempt(key, s, null) instanceof Entry<?, ?> made) {
                now = (Entry<K, V>) made;
            }
            if (now != null) {
                return handles.newHandle(now, s);
            }
        }
        // nested: suspending it suspends every level of the thread; refused to a section holder
        try (Attachment level = attacher.attach(CancellationToken.none(), false, false)) {
            return attacher.detachedByCaller(
                    attacher.state(),
                    () -> Waits.await(acquireAsyncWithin(key, timeout), objectFor(key)),
                    () -> operation + "(" + Keys.describe(key) + ", " + timeout + ")");
        }
    }

    /** {@return what an acquire of {@code key} waits for, in messages} */
    private String objectFor(K key) {
        return "an object for key " + Keys.describe(key) + " in pool '" + pool.name() + "'";
    }

    /**
     * {@code acquireAsync(key, timeout)}: as with a token, the timer armed only if the acquire has to
     * wait (a zero timeout fires at once). A timeout fails the stage with a {@code
     * WaitTimeoutException} that carries the stack of this call (taken when the wait starts, so only
     * waits pay for it); a negative timeout fails it with an {@code IllegalArgumentException}.
     */
    CompletionStage<Handle<V>> acquireAsyncWithin(K key, Duration timeout) {
        Objects.requireNonNull(key, "key");
        IllegalArgumentException refused = Waits.refusal(timeout);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        return Waits.offTheDrainer(() -> timedAcquireAsync(key, timeout), Handle::close);
    }

    /** {@link #acquireAsyncWithin}, its arguments checked, on a thread that is not a shared drainer. */
    private CompletionStage<Handle<V>> timedAcquireAsync(K key, Duration timeout) {
        CancellationSource timer = new CancellationSource();
        CompletionStage<Handle<V>> acquired = acquireAsync(key, timer.token());
        if (acquired.toCompletableFuture().isDone()) {
            timer.close();
            return acquired;
        }
        WaitTimeoutException timedOut;
        try {
            Waits.arm(timer, timeout);
            timedOut = new WaitTimeoutException(objectFor(key), timeout); // the caller's stack
        } catch (Throwable failed) { // the wait is queued: end it, so nothing it would get is orphaned
            timer.cancel();
            timer.close();
            acquired.thenAccept(Handle::close);
            return CompletableFuture.failedFuture(failed);
        }
        CompletableFuture<Handle<V>> result = new CompletableFuture<>();
        acquired.whenComplete((handle, failure) -> {
            boolean fired = timer.token().isCancellationRequested();
            timer.close();
            if (failure == null) {
                if (!result.complete(handle)) {
                    handle.close(); // the caller gave up first
                }
                return;
            }
            if (result.isDone()) {
                return; // the caller settled the future and so ended the wait: its outcome stands, no timeout
            }
            Throwable cause = Waits.unwrapped(failure);
            if (fired && cause instanceof CancellationException) {
                attacher.reportThreadsEndedAttached(); // one may hold the gate this waited for
                result.completeExceptionally(Waits.counted(timedOut, pool));
            } else {
                result.completeExceptionally(cause);
            }
        });
        // settled by the caller (a cancel, or a value of its own): end the wait; settled by the
        // acquire, the wait is over and this ends nothing
        result.whenComplete((handle, failure) -> timer.cancel());
        return result;
    }

    /**
     * {@code acquireAsync}: {@link #acquireEntryAsync}, the handle made once the reference is the
     * caller's. A caller that completes or cancels the returned future itself ends the wait.
     */
    CompletionStage<Handle<V>> acquireAsync(K key, CancellationToken token) {
        CompletableFuture<Entry<K, V>> acquired = acquireEntryAsync(key, token).toCompletableFuture();
        if (acquired.isDone() && !acquired.isCompletedExceptionally()) { // the live object's: nothing to chain
            return CompletableFuture.completedStage(handles.newHandle(acquired.join(), null));
        }
        CompletableFuture<Handle<V>> result = new CompletableFuture<>();
        acquired.whenComplete((entry, failure) -> {
            if (failure != null) {
                result.completeExceptionally(Waits.unwrapped(failure)); // a cancellation reads as one
            } else if (result.isDone()) {
                handles.release(entry, null); // the caller gave up first
            } else {
                Handle<V> handle = handles.newHandle(entry, null);
                if (!result.complete(handle)) {
                    handle.close(); // the caller gave up meanwhile
                }
            }
        });
        result.whenComplete((handle, failure) -> acquired.cancel(false)); // ends a wait still under way
        return result;
    }

    /**
     * {@return a stage of a new reference to the object of {@code key}}, with no handle: waits for
     * the gate, a creation and capacity without parking a thread. The caller's token ends the wait,
     * as does completing the returned future itself; a reference that arrives anyway is given back,
     * so none is lost.
     */
    CompletionStage<Entry<K, V>> acquireEntryAsync(K key, CancellationToken token) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        if (pool.isClosed()) {
            return CompletableFuture.failedFuture(
                    new PoolClosedException(pool.onClosedPool("acquireAsync(" + Keys.describe(key) + ")")));
        }
        if (token.isCancellationRequested()) { // whether or not the object is there: as attach does
            return CompletableFuture.failedFuture(new CancellationException(
                    "acquireAsync(" + Keys.describe(key) + ") with a token that was already cancelled"));
        }
        Entry<K, V> entry;
        try {
            entry = slots.entry(key);
        } catch (Throwable keyFailed) { // the key's hashCode or equals (even a sneaky checked one): through the stage
            return CompletableFuture.failedFuture(keyFailed);
        }
        if (entry != null && (checked ? entry.retainIfLive() > 0 : entry.retainLive(counters, null) >= 0)) {
            pool.hook(PoolHooks.Point.ASYNC_RETAINED);
            if (!entry.isRetired()) {
                return CompletableFuture.completedStage(entry);
            }
            // retired meanwhile, or kept its slot when retired: the reference goes back as a handle's
            // would (queued on a detached thread: at zero the object is disposed attached, never
            // here), and the entry leaves the slot so the attempt looks again
            handles.release(entry, null);
            try {
                slots.vacate(entry);
            } catch (Throwable keyFailed) {
                return CompletableFuture.failedFuture(keyFailed);
            }
        }
        CancellationSource callerGaveUp = CancellationSource.linkedTo(token);
        CompletableFuture<Entry<K, V>> result = new CompletableFuture<>();
        acquireWithPermit(key, callerGaveUp.token(), null).whenComplete((acquired, failure) -> {
            callerGaveUp.close();
            if (failure != null) {
                result.completeExceptionally(Waits.unwrapped(failure));
            } else if (!result.complete(acquired)) {
                handles.release(acquired, null);
            }
        });
        // completed by the caller (cancel, complete, orTimeout, completeOnTimeout): the wait ends;
        // completed by the wait itself: the wait is over and this cancels nothing
        result.whenComplete((acquired, failure) -> callerGaveUp.cancel());
        return result;
    }

    /**
     * One async attempt, attached when the gate is granted; {@code permit} is held for a creation, or
     * null. A creation keeps the gate: the step runs on whichever thread granted it (often the call
     * executor's), and taking the gate back there could wait for a function queued on that thread.
     */
    @SuppressWarnings("unchecked")
    private CompletionStage<Entry<K, V>> acquireWithPermit(K key, CancellationToken token, Guard permit) {
        CompletionStage<Object> attempt = attacher.attachAsync(token, false, attachment -> {
            Attempt result = slots.attempt(key, attacher.state(), permit);
            if (result instanceof Creation) {
                // the wait for it is set up here, attached: the creation's end then shares its object
                // on the creator's thread, which still holds it. Set up once the gate is left, that
                // end could come first, and the object reach zero and go to another key's waiter
                return afterCreation((Creation<K, V>) result, key, token, permit);
            }
            return result;
        });
        return attempt.thenCompose(result -> {
            if (result instanceof Entry) {
                return CompletableFuture.completedStage((Entry<K, V>) result);
            }
            if (result instanceof CompletionStage) {
                return (CompletionStage<Entry<K, V>>) result;
            }
            return capacity.waitInLine(key, token, new Capacity.Exits<>() {
                @Override
                public Entry<K, V> current(K k) {
                    return slots.entry(k);
                }

                @Override
                public CompletionStage<Entry<K, V>> granted(Guard granted) {
                    return acquireWithPermit(key, token, granted);
                }

                @Override
                public void giveBack(Entry<K, V> served) {
                    handles.release(served, null);
                }

                @Override
                public Entry<K, V> reviveIdle(K k) {
                    Entry<K, V> idle = slots.entry(k);
                    if (idle == null || idle.count() != 0) {
                        return null;
                    }
                    Attempt revived = slots.attempt(k, attacher.state(), null);
                    return revived instanceof Entry ? (Entry<K, V>) revived : null;
                }
            });
        });
    }

    /**
     * {@return the wait of an async acquire for {@code creation}}: single flight, a failed creation
     * fails its async waiters too; one that made nothing (it lacked capacity) lets them try again.
     * The caller's token ends the wait.
     */
    @SuppressWarnings("unchecked")
    private CompletionStage<Entry<K, V>> afterCreation(
            Creation<K, V> creation, K key, CancellationToken token, Guard permit) {
        CompletionStage<Object> created = creation.handle((entry, failure) -> failure != null ? failure : entry);
        return untilCancelled(created, token, key)
                .thenCompose(outcome -> outcome instanceof Throwable
                        ? CompletableFuture.failedFuture((Throwable) outcome)
                        : shareOrAttempt((Entry<K, V>) outcome, key, token, permit));
    }

    /**
     * After the creation an async acquire waited for: shares {@code made}, the object it published,
     * at once if it is still live, as an attached waiter does; otherwise (it made nothing, or its
     * object reached zero meanwhile) attempts again through the gate. Taking the reference at once
     * matters where the gate is busy: in {@code GLOBAL} mode the creator's caller holds it, and by
     * the time this waiter got it the object could have reached zero and gone to another key's
     * capacity waiter, leaving this one to make the key a third time.
     */
    private CompletionStage<Entry<K, V>> shareOrAttempt(
            Entry<K, V> made, K key, CancellationToken token, Guard permit) {
        if (made != null && made.retainIfLive() > 0) {
            if (!made.isRetired()) {
                if (permit != null) {
                    permit.close(); // held for a creation another thread made
                }
                return CompletableFuture.completedStage(made);
            }
            handles.release(made, null); // retired meanwhile: as the first look does
        }
        return acquireWithPermit(key, token, permit);
    }

    /** Fails {@code stage}'s copy with a {@link CancellationException} when {@code token} is cancelled first. */
    private static <T> CompletionStage<T> untilCancelled(
            CompletionStage<T> stage, CancellationToken token, Object key) {
        if (!token.canBeCancelled()) {
            return stage;
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        Registration registration =
                token.register(() -> result.completeExceptionally(new CancellationException("acquireAsync("
                        + Keys.describe(key) + ") was cancelled while another thread created that key's object")));
        stage.whenComplete((value, failure) -> {
            registration.unregister();
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                result.complete(value);
            }
        });
        return result;
    }
}
