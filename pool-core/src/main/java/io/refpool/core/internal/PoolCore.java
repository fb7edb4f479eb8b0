package io.refpool.core.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;
import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.CapacityExhaustedException;
import io.refpool.core.ErrorListener;
import io.refpool.core.EvictionCause;
import io.refpool.core.Handle;
import io.refpool.core.LeakDetection;
import io.refpool.core.ObjectCreationException;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.core.PoolStats;
import io.refpool.sync.AsyncSemaphore;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.Registration;
import java.util.ArrayList;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The pool: keyed objects with reference counts, the deferred-release queue, capacity, the idle
 * cache, leak tracking and close. {@code RefPool} is its public face.
 *
 * <h2>Implementation notes</h2>
 *
 * <p><b>Slots.</b> {@code slots} maps a key to its one {@link Entry} (live with count &ge; 1, or
 * idle with count 0) or to a {@link Creation} while the factory runs. An entry stays in the map
 * while idle; the Caffeine cache only holds idle values for its eviction policy. A key's slot goes
 * away when its entry is disposed. The factory runs outside any lock and never inside a map
 * {@code compute}: the creator publishes a {@code Creation} with {@code putIfAbsent}, and others
 * acquiring the key wait for it (single flight).
 *
 * <p><b>Releases.</b> A handle closed on an attached thread decrements now; anywhere else it
 * enqueues a pending decrement on the {@link ReleaseQueue}, which attaches apply. At count 0 an
 * object goes to the idle cache, or is disposed. Disposal claims the entry with a CAS from exactly 0
 * ({@link Entry#tryDispose()}), so an object revived in between is never disposed, and runs the user's
 * disposer attached, outside every lock. Disposals on a thread run in one loop over a per-thread work
 * list, so a disposer that closes handles to other objects extends the loop instead of recursing.
 *
 * <p><b>Idle cache.</b> Acquire revives an idle object (count 0 to 1) and removes it from the cache,
 * which Caffeine reports as {@code EXPLICIT}: ignored. Only evictions count: the listener enqueues
 * them on the release queue, and the attached apply disposes the object if it is still idle from
 * that spell: an object revived meanwhile fails the claim, and one idled again is back in the cache,
 * whose policy decides anew. The cache holds only idle objects.
 *
 * <p><b>Capacity.</b> Each object holds one permit of the pool's {@link AsyncSemaphore} from creation
 * to disposal. Creation without a permit evicts idle objects first; an attached {@code acquire} then
 * fails fast, while {@code acquireAsync} waits in line, detached. While anyone waits in line, an
 * object reaching count 0 is disposed so its permit goes to the head waiter. An object that idles
 * just as a waiter queues is reclaimed by whichever of the two sees the other: the releaser checks
 * the line again after its put, and the waiter, once queued, evicts idle objects (Dekker-style, on
 * the volatile queue length and the cache's map), so nobody waits while an idle object holds a
 * permit.
 *
 * <p><b>Drainer.</b> When releases stay pending with no attach for the drain delay, or pile up past
 * the threshold, a task on the pool's executor attaches and applies them. After close, every pending
 * release is drained at once.
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

    /** Returned by an attached acquire that needs a capacity permit it could not get. */
    private static final Object NEEDS_CAPACITY = new Object();

    private final Function<? super K, ? extends V> factory;
    private final Consumer<? super V> disposer;
    private final AttachMode attachMode;
    private final Executor executor;
    private final long drainDelayNanos;
    private final int drainThreshold;
    private final ErrorListener errors;
    private final int maxObjects;
    private final AsyncSemaphore capacity;
    private final Cache<K, V> idle;
    private final LeakTracker leaks;
    /** Leak detection is off: no handle is tracked. */
    private final boolean untracked;

    final PoolCounters counters = new PoolCounters();

    private final ConcurrentHashMap<K, Object> slots = new ConcurrentHashMap<>();
    /**
     * Every pooled object by identity: one instance cannot be pooled under two keys, and the
     * eviction listener and capacity reclaim find an object's entry without calling the key's
     * {@code hashCode}/{@code equals}, which may throw.
     */
    private final ConcurrentHashMap<Identity, Entry<K, V>> instances = new ConcurrentHashMap<>();

    private final ReleaseQueue releases;
    private final Attacher<K, V> attacher;
    private final CancellationSource closing = new CancellationSource();
    private final AtomicInteger lifecycle = new AtomicInteger(OPEN);
    /** Counted down when the first close() has finished. */
    private final CountDownLatch closed = new CountDownLatch(1);
    /** The thread running the first close(), while it runs. */
    private volatile Thread closer;

    private final AtomicBoolean delayedDrainScheduled = new AtomicBoolean();
    private final AtomicBoolean urgentDrainScheduled = new AtomicBoolean();

    private volatile PoolHooks hooks;

    public PoolCore(PoolConfig<K, V> config) {
        this.factory = config.factory;
        this.disposer = config.disposer;
        this.attachMode = config.attachMode;
        this.executor = config.executor;
        this.drainDelayNanos = config.drainDelayNanos;
        this.drainThreshold = config.drainThreshold;
        this.errors = config.errorListener;
        this.maxObjects = config.maxObjects;
        this.capacity = config.maxObjects == Integer.MAX_VALUE ? null : new AsyncSemaphore(config.maxObjects);
        this.idle = config.idle == null ? null : buildIdleCache(config.idle);
        this.leaks = new LeakTracker(this, config.leakDetection, config.leakSampleInterval);
        this.untracked = config.leakDetection == LeakDetection.OFF;
        this.releases = config.releaseQueue.get();
        this.attacher = new Attacher<>(this, config.attachMode);
    }

    private Cache<K, V> buildIdleCache(Consumer<? super Caffeine<Object, Object>> configurer) {
        Caffeine<Object, Object> builder = Caffeine.newBuilder();
        configurer.accept(builder);
        try {
            builder.scheduler(Scheduler.systemScheduler());
        } catch (IllegalStateException alreadySet) {
            // the configurer chose its own scheduler
        }
        Caffeine<K, V> listening;
        try {
            listening = builder.<K, V>evictionListener(this::onEvicted);
        } catch (IllegalStateException alreadySet) {
            throw new IllegalArgumentException(
                    "idle(...) must not set an eviction listener: the pool disposes evicted objects itself",
                    alreadySet);
        }
        return listening.build(); // Caffeine's own checks of the configuration speak for themselves
    }

    // ---------------------------------------------------------------- accessors

    public AttachMode attachMode() {
        return attachMode;
    }

    public ReleaseQueue releaseQueue() {
        return releases;
    }

    CancellationToken closingToken() {
        return closing.token();
    }

    public boolean isClosed() {
        return lifecycle.get() != OPEN;
    }

    void checkOpen(String operation) {
        if (lifecycle.get() != OPEN) {
            throw new PoolClosedException(operation + " on a closed pool");
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
        Objects.requireNonNull(token, "token");
        return attacher.attach(token, false, false);
    }

    public Attachment exclusive(CancellationToken token) {
        Objects.requireNonNull(token, "token");
        return attacher.attach(token, true, false);
    }

    public <T> CompletionStage<T> attachAsync(
            CancellationToken token, boolean exclusive, Function<? super Attachment, ? extends T> fn) {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(fn, "fn");
        return attacher.attachAsync(token, exclusive, fn);
    }

    /** The attach-side check: one acquire load when nothing is pending. */
    void drainIfDirty(AttachState s) {
        ArrayList<Object> batch = releases.takeIfDirty();
        if (batch != null) {
            applyBatch(batch, s);
        }
    }

    private void applyBatch(ArrayList<Object> batch, AttachState s) {
        PoolEvents.Drain event = new PoolEvents.Drain();
        event.begin();
        boolean outermost = !s.disposing;
        s.disposing = true;
        try {
            for (Object item : batch) {
                try {
                    if (item instanceof Eviction) {
                        Eviction<?, ?> eviction = (Eviction<?, ?>) item;
                        Entry<K, V> entry = cast(eviction.entry);
                        // The spell, not the cache, says whether the object is still idle from the
                        // spell that was evicted: Caffeine calls the listener before it removes the
                        // entry, so a drain in that window still finds it cached.
                        if (entry.idleSpell() != eviction.spell) {
                            continue; // revived and idled again since: the cache governs the new spell
                        }
                        if (claimForDisposal(entry, s)) {
                            counters.evicted(eviction.cause);
                            // a put that raced the claim must not leave a disposed object cached
                            removeIdleQuietly(entry);
                        }
                    } else {
                        decrementNow(cast(item), s);
                    }
                } catch (Throwable e) {
                    report(PoolError.Kind.DRAINER_FAILED, null, "applying a deferred release failed", e);
                }
            }
            if (outermost) {
                runDisposals(s);
            }
        } finally {
            if (outermost) {
                s.disposing = false;
            }
            counters.drains.increment();
            event.batchSize = batch.size();
            event.commit();
        }
    }

    @SuppressWarnings("unchecked")
    private Entry<K, V> cast(Object item) {
        return (Entry<K, V>) item;
    }

    // ---------------------------------------------------------------- acquire

    /**
     * The attached acquire. The fast path (a live object shared by an attached thread of an open
     * pool, leak detection off) is kept small enough for the JIT to inline into the caller, where it
     * can remove the handle allocation of an acquire that is closed in the same method; everything
     * else is {@link #acquireSlow}.
     */
    public Handle<V> acquire(K key) {
        AttachState s = attacher.state();
        if (key != null && s.depth > 0 && untracked && lifecycle.get() == OPEN) {
            Object slot = slots.get(key);
            if (slot instanceof Entry) {
                Entry<K, V> entry = cast(slot);
                if (entry.tryRetainLive()) {
                    return new PooledHandle<>(this, entry, null, s);
                }
            }
        }
        return acquireSlow(key, s);
    }

    private Handle<V> acquireSlow(K key, AttachState s) {
        Objects.requireNonNull(key, "key");
        if (lifecycle.get() != OPEN) {
            throw new PoolClosedException("acquire(" + Keys.describe(key) + ") on a closed pool");
        }
        if (s.depth == 0) {
            throw new IllegalStateException("acquire(" + Keys.describe(key) + ") needs the calling thread attached to"
                    + " the pool: use try (Attachment attached = pool.attach()) { ... }, or acquireAsync");
        }
        for (; ; ) {
            Object result = acquireAttached(key, s, null);
            if (result instanceof Handle) {
                @SuppressWarnings("unchecked")
                Handle<V> handle = (Handle<V>) result;
                return handle;
            }
            if (result == NEEDS_CAPACITY) {
                throw new CapacityExhaustedException("acquire(" + Keys.describe(key) + ") needs a new object, but all "
                        + maxObjects + " objects the pool may hold are in use and none is idle; an attached acquire"
                        + " does not wait for capacity: use acquireAsync to wait in line");
            }
            awaitCreation(key, cast2(result), s);
        }
    }

    public CompletionStage<Handle<V>> acquireAsync(K key, CancellationToken token) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(token, "token");
        if (lifecycle.get() != OPEN) {
            throw new PoolClosedException("acquireAsync(" + Keys.describe(key) + ") on a closed pool");
        }
        Object slot = slots.get(key);
        if (slot instanceof Entry) {
            Entry<K, V> entry = cast(slot);
            int before = entry.tryRetain();
            if (before > 0) {
                return CompletableFuture.completedStage(newHandle(entry, null));
            }
            if (before == 0) {
                revived(entry);
                return CompletableFuture.completedStage(newHandle(entry, null));
            }
        }
        // the caller may cancel or time out the future it gets (orTimeout): then the wait ends, and
        // a handle that arrives anyway is closed, so neither a reference nor a permit is lost
        CancellationSource callerGaveUp = CancellationSource.linkedTo(token);
        CompletableFuture<Handle<V>> result = new CompletableFuture<>();
        acquireAsync(key, callerGaveUp.token(), null).whenComplete((handle, failure) -> {
            callerGaveUp.close();
            if (failure != null) {
                result.completeExceptionally(failure);
            } else if (!result.complete(handle)) {
                handle.close();
            }
        });
        // completed by the caller (cancel, complete, orTimeout, completeOnTimeout): the wait ends;
        // completed by the wait itself: the wait is over and this cancels nothing
        result.whenComplete((handle, failure) -> callerGaveUp.cancel());
        return result;
    }

    private CompletionStage<Handle<V>> acquireAsync(K key, CancellationToken token, Guard permit) {
        CompletionStage<Object> attempt =
                attacher.attachAsync(token, false, attachment -> acquireAttached(key, attacher.state(), permit));
        return attempt.thenCompose(result -> {
            if (result instanceof Handle) {
                @SuppressWarnings("unchecked")
                Handle<V> handle = (Handle<V>) result;
                return CompletableFuture.completedStage(handle);
            }
            if (result instanceof Creation) {
                // single flight: a failed creation fails its async waiters too; one that made
                // nothing (it lacked capacity) lets them try again. The caller's token ends the wait.
                CompletionStage<Throwable> created = ((Creation<?, ?>) result).handle((entry, failure) -> failure);
                return untilCancelled(created, token, key)
                        .thenCompose(failure -> failure == null
                                ? acquireAsync(key, token, permit)
                                : CompletableFuture.failedStage(failure));
            }
            return waitForCapacity(key, token);
        });
    }

    private CompletionStage<Handle<V>> waitForCapacity(K key, CancellationToken token) {
        if (isClosed()) {
            return CompletableFuture.failedStage(
                    new PoolClosedException("acquireAsync(" + Keys.describe(key) + ") on a closed pool"));
        }
        CancellationSource linked = CancellationSource.linkedTo(token, closing.token());
        CompletionStage<Guard> waiting = capacity.acquire(1, linked.token());
        CompletionStage<Handle<V>> result = waiting.handle((permit, failure) -> {
                    linked.close();
                    if (failure != null) {
                        Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
                        if (isClosed() && cause instanceof CancellationException) {
                            throw new CompletionException(new PoolClosedException("the pool closed while acquireAsync("
                                    + Keys.describe(key) + ") waited for capacity"));
                        }
                        throw new CompletionException(cause);
                    }
                    return permit;
                })
                .thenCompose(permit -> acquireAsync(key, token, permit).whenComplete((handle, failure) -> {
                    if (failure != null) {
                        permit.close(); // the attempt ended without an object to hold it
                    }
                }));
        hook(PoolHooks.Point.CAPACITY_QUEUED);
        if (idle != null && capacity.queueLength() > 0) {
            // an object may have idled after this acquirer's attempt looked for idle objects and
            // before it queued, when nobody was in line to dispose it for: reclaim idle objects now
            attacher.attachAsync(CancellationToken.none(), false, attachment -> {
                evictIdleForWaiters(attacher.state());
                return null;
            });
        }
        return result;
    }

    /**
     * One attached attempt: share or revive the key's object, or create it.
     *
     * @param permit a capacity permit already held for a creation, or {@code null}
     * @return a handle, {@link #NEEDS_CAPACITY}, or the {@link Creation} to wait for (possibly this
     *     thread's own: an async continuation granted on a creating thread waits for it without
     *     blocking; a synchronous acquire refuses to wait for itself)
     */
    private Object acquireAttached(K key, AttachState s, Guard permit) {
        for (; ; ) {
            Object slot = slots.get(key);
            if (slot == null) {
                Creation<K, V> creation = new Creation<>(Thread.currentThread());
                if (slots.putIfAbsent(key, creation) == null) {
                    return create(key, creation, s, permit);
                }
                continue;
            }
            if (slot instanceof Entry) {
                Entry<K, V> entry = cast(slot);
                int before = entry.tryRetain();
                if (before >= 0) {
                    if (before == 0) {
                        revived(entry);
                    }
                    if (permit != null) {
                        permit.close(); // someone else created it meanwhile
                    }
                    return newHandle(entry, s);
                }
                slots.remove(key, entry); // disposed and on its way out
                continue;
            }
            Creation<K, V> creation = cast2(slot);
            if (creation.isDone()) {
                // abandoned by a creator whose removal of it failed (the key's hashCode threw)
                slots.remove(key, creation);
                continue;
            }
            return creation;
        }
    }

    @SuppressWarnings("unchecked")
    private Creation<K, V> cast2(Object slot) {
        return (Creation<K, V>) slot;
    }

    /**
     * Waits for another thread's creation of {@code key}, detached: the creator may need the gate
     * (a factory that re-attaches after blocking work in {@code detached()}), so nobody waits for a
     * creation while holding it.
     */
    private void awaitCreation(K key, Creation<K, V> creation, AttachState s) {
        if (creation.creator == Thread.currentThread()) {
            throw new IllegalStateException("acquire(" + Keys.describe(key) + ") on the thread that is creating that"
                    + " key's object (the factory acquired its own key): it would wait for itself");
        }
        if (!creation.isDone()) {
            attacher.detached(s, () -> creation.handle((entry, failure) -> null).join());
        }
        if (creation.isCompletedExceptionally()) {
            try {
                creation.join();
            } catch (CompletionException e) {
                throw unchecked(e.getCause());
            }
        }
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

    /**
     * Runs the factory for a published {@link Creation} and publishes its entry. Until the factory
     * returns, a failure gives back the permit and abandons the creation; after it, the object
     * exists and holds the permit, so nothing that can still fail (the key's {@code hashCode}, leak
     * tracking) may release the permit without disposing the object.
     */
    private Object create(K key, Creation<K, V> creation, AttachState s, Guard heldPermit) {
        Guard permit = heldPermit;
        V value;
        try {
            if (permit == null && capacity != null) {
                permit = takePermit(s);
                if (permit == null) {
                    abandon(key, creation, null); // nothing was made; waiters try again
                    return NEEDS_CAPACITY;
                }
            }
            if (lifecycle.get() != OPEN) {
                throw new PoolClosedException("acquire(" + Keys.describe(key) + ") on a closed pool");
            }
            value = factory.apply(key);
            if (value == null) {
                throw new NullPointerException("the factory returned null for key " + Keys.describe(key));
            }
        } catch (Throwable failure) { // also checked exceptions, which code in other JVM languages throws
            Throwable shaped = creationFailure(key, failure);
            if (permit != null) {
                permit.close();
            }
            abandon(key, creation, shaped);
            if (!(failure instanceof PoolClosedException)) {
                report(PoolError.Kind.FACTORY_FAILED, key, "the factory failed for key " + Keys.describe(key), failure);
            }
            throw unchecked(shaped);
        }
        Entry<K, V> entry = new Entry<>(key, value, permit);
        if (instances.putIfAbsent(new Identity(value), entry) == null) {
            counters.creations.increment(); // from here on the object is the pool's to dispose
        } else {
            // the instance belongs to another key: not this creation's to dispose
            if (permit != null) {
                permit.close();
            }
            IllegalStateException shared =
                    new IllegalStateException("the factory returned, for key " + Keys.describe(key)
                            + ", an instance that is already pooled under another key: each key needs its own object");
            abandon(key, creation, shared);
            report(PoolError.Kind.FACTORY_FAILED, key, shared.getMessage(), shared);
            throw shared;
        }
        try {
            slots.replace(key, creation, entry);
        } catch (Throwable keyFailed) { // the key's hashCode or equals threw: the object cannot be published
            abandon(key, creation, keyFailed);
            entry.release();
            claimForDisposal(entry, s);
            throw unchecked(keyFailed);
        }
        creation.complete(entry);
        return newHandle(entry, s);
    }

    /** Takes a creation out of its slot and settles it; a slot the key's hashCode keeps is healed later. */
    private void abandon(K key, Creation<K, V> creation, Throwable failure) {
        try {
            slots.remove(key, creation);
        } catch (Throwable keyFailed) {
            // the settled creation stays until the key's next acquire drops it
        }
        if (failure == null) {
            creation.complete(null);
        } else {
            creation.completeExceptionally(failure);
        }
    }

    /** One shape for every acquirer of a failed creation: unchecked and errors as thrown, checked wrapped. */
    private static Throwable creationFailure(Object key, Throwable failure) {
        if (failure instanceof RuntimeException || failure instanceof Error) {
            return failure;
        }
        return new ObjectCreationException(
                "the factory for key " + Keys.describe(key) + " threw "
                        + failure.getClass().getName(),
                failure);
    }

    /** {@return {@code failure} to throw: unchecked as it is, checked wrapped}; an error is thrown here */
    private static RuntimeException unchecked(Throwable failure) {
        if (failure instanceof RuntimeException) {
            return (RuntimeException) failure;
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        return new ObjectCreationException(
                "creating an object failed with " + failure.getClass().getName(), failure);
    }

    /**
     * A permit for a new object, evicting idle objects to free one, then applying the releases still
     * queued (objects the cache evicted or expired, awaiting disposal, hold permits too);
     * {@code null} if none can be had.
     */
    private Guard takePermit(AttachState s) {
        boolean drained = false;
        for (; ; ) {
            Optional<Guard> permit = capacity.tryAcquire(1);
            if (permit.isPresent()) {
                return permit.get();
            }
            if (evictOneIdle(s)) {
                continue;
            }
            if (drained) {
                return null;
            }
            drained = true;
            if (idle != null) {
                try {
                    idle.cleanUp(); // expired entries not yet evicted are invisible to evictOneIdle
                } catch (Throwable cacheFailed) {
                    report(PoolError.Kind.IDLE_CACHE_FAILED, null, "the idle cache's maintenance failed", cacheFailed);
                }
            }
            ArrayList<Object> pending = releases.takeAll();
            if (pending != null) {
                applyBatch(pending, s);
            }
        }
    }

    /** Disposes idle objects while capacity waiters are queued; their permits go to the waiters. */
    private void evictIdleForWaiters(AttachState s) {
        while (capacity.queueLength() > 0 && evictOneIdle(s)) {
            // the permit of each disposed object went to the head waiter
        }
    }

    private boolean evictOneIdle(AttachState s) {
        if (idle == null) {
            return false;
        }
        Map<K, V> coldest = coldestIdle();
        // then anything idle: the policy's order may not have seen the latest put yet
        return evictOneOf(coldest, s) || (coldest != idle.asMap() && evictOneOf(idle.asMap(), s));
    }

    private boolean evictOneOf(Map<K, V> candidates, AttachState s) {
        for (V candidate : candidates.values()) {
            Entry<K, V> entry = instances.get(new Identity(candidate));
            if (entry != null && entry.tryDispose()) { // idle from this spell or a later one: either way idle
                removeIdleQuietly(entry);
                counters.evicted(EvictionCause.CAPACITY);
                dispose(entry); // now: its permit is what this creation needs
                return true;
            }
        }
        return false;
    }

    private Map<K, V> coldestIdle() {
        Policy<K, V> policy = idle.policy();
        Optional<Policy.Eviction<K, V>> bySize = policy.eviction();
        if (bySize.isPresent()) {
            return bySize.get().coldest(4);
        }
        Optional<Policy.FixedExpiration<K, V>> byAccess = policy.expireAfterAccess();
        if (byAccess.isPresent()) {
            return byAccess.get().oldest(4);
        }
        return idle.asMap();
    }

    private void revived(Entry<K, V> entry) {
        counters.idleHits.increment();
        if (idle != null) {
            removeIdleQuietly(entry); // EXPLICIT: not disposed
        }
    }

    /** Takes {@code entry}'s object out of the idle cache if it is there; the cache's failures are reported. */
    private void removeIdleQuietly(Entry<K, V> entry) {
        try {
            idle.asMap().remove(entry.key, entry.value);
        } catch (Throwable cacheFailed) { // the key's hashCode or equals: a stale value stays until evicted
            report(
                    PoolError.Kind.IDLE_CACHE_FAILED,
                    entry.key,
                    "the idle cache failed to let go of the object of key " + Keys.describe(entry.key),
                    cacheFailed);
        }
    }

    /**
     * {@return a new handle to {@code entry}, whose reference the caller already took}; nothing here
     * may throw and lose that reference, so leak tracking that fails leaves the handle untracked
     *
     * @param opener the attach state of the opening thread, if known, which saves its close a
     *     thread-local lookup
     */
    Handle<V> newHandle(Entry<K, V> entry, AttachState opener) {
        if (untracked) {
            return new PooledHandle<>(this, entry, null, opener);
        }
        LeakTracker.Tracked tracked = null;
        try {
            tracked = leaks.track(entry);
        } catch (Throwable e) {
            report(PoolError.Kind.HANDLE_LEAKED, entry.key, "leak tracking failed; the handle is not tracked", e);
        }
        PooledHandle<K, V> handle = new PooledHandle<>(this, entry, tracked, opener);
        if (tracked != null) {
            try {
                leaks.register(handle, tracked);
            } catch (Throwable e) {
                report(PoolError.Kind.HANDLE_LEAKED, entry.key, "leak tracking failed; the handle is not tracked", e);
            }
        }
        return handle;
    }

    // ---------------------------------------------------------------- release

    /** A handle's close: now if attached, otherwise deferred. */
    void release(Entry<K, V> entry, AttachState opener) {
        AttachState s = opener != null && opener.thread == Thread.currentThread() ? opener : attacher.state();
        if (s.depth == 0) {
            enqueue(entry);
        } else if (entry.release() == 0) {
            reachedZero(entry, s);
        }
    }

    /**
     * Defers a release to the next attach, or to the drainer. An eviction only ever schedules the
     * delayed drainer: it is enqueued from inside Caffeine's eviction, where running a drain would
     * apply releases inside the cache's update.
     */
    void enqueue(Object release) {
        int pending = releases.enqueue(release);
        if ((pending >= drainThreshold || lifecycle.get() != OPEN) && !(release instanceof Eviction)) {
            if (!urgentDrainScheduled.get() && urgentDrainScheduled.compareAndSet(false, true)) {
                submitDrainer(urgentDrainScheduled);
            }
        } else if (!delayedDrainScheduled.get() && delayedDrainScheduled.compareAndSet(false, true)) {
            scheduleDelayedDrain();
        }
    }

    /**
     * Arms the delayed drain. The JDK's delay thread only hands the drain to the library's own
     * drainer threads, which cannot block: it never runs a drain or calls the pool's executor, whose
     * caller-runs policy would run the drain there and stall every other timer of the JVM. If even
     * that hand-off fails, the timer is armed again.
     */
    private void scheduleDelayedDrain() {
        try {
            CompletableFuture.delayedExecutor(drainDelayNanos, TimeUnit.NANOSECONDS, this::handOffDelayedDrain)
                    .execute(() -> submitDrainer(delayedDrainScheduled));
        } catch (Throwable timerFailed) {
            delayedDrainScheduled.set(false); // the next enqueue or attach takes over
            report(PoolError.Kind.DRAINER_FAILED, null, "the drain timer could not be armed", timerFailed);
        }
    }

    private void handOffDelayedDrain(Runnable submit) {
        try {
            DrainerThreads.shared().execute(submit);
        } catch (Throwable noThread) {
            report(
                    PoolError.Kind.DRAINER_FAILED,
                    null,
                    "no drainer thread could take a delayed drain; retrying after" + " the drain delay",
                    noThread);
            scheduleDelayedDrain();
        }
    }

    /**
     * Hands a drain to the pool's executor. An executor that rejects it (shut down, saturated) or
     * fails otherwise (an {@code Error}) gets it back on this thread, as a caller-runs policy would:
     * a release left queued with no drainer coming might never be applied once the pool is closed
     * and nobody attaches. The drain never waits for the gate, so running it here blocks nobody.
     */
    private void submitDrainer(AtomicBoolean scheduled) {
        Runnable drain = () -> drainFromExecutor(scheduled);
        try {
            executor.execute(drain);
            return;
        } catch (RejectedExecutionException rejected) {
            report(
                    PoolError.Kind.DRAINER_REJECTED,
                    null,
                    "the pool's executor rejected a drain; it runs on the thread that scheduled it",
                    rejected);
        } catch (Throwable failed) {
            report(
                    PoolError.Kind.DRAINER_FAILED,
                    null,
                    "the pool's executor failed to take a drain; it runs on the thread that scheduled it",
                    failed);
        }
        drain.run();
    }

    /**
     * The drainer. It clears its "scheduled" flag and then reads the queue's size; an enqueue
     * writes the size and then reads the flag. All four accesses are volatile, so at least one side
     * sees the other: the enqueue schedules a new drain, or this drain sees the item. The drainer
     * swaps the list whatever the dirty flag says, because the enqueue raises that flag with a
     * release store that may not be visible yet; a flag left up only costs the next attach an empty
     * swap. It never parks on the gate: when the gate is busy it joins the line without a thread
     * and runs when granted, so a drainer thread shared with other pools is never held by this one.
     */
    private void drainFromExecutor(AtomicBoolean scheduled) {
        scheduled.set(false); // an enqueue from now on schedules again
        if (releases.size() == 0) {
            return;
        }
        try {
            attacher.runInternal(this::drainAll);
        } catch (Throwable e) {
            report(PoolError.Kind.DRAINER_FAILED, null, "the drainer failed to apply pending releases", e);
        }
    }

    private void drainAll(AttachState s) {
        ArrayList<Object> batch = releases.takeAll();
        if (batch != null) {
            applyBatch(batch, s);
        }
    }

    private void decrementNow(Entry<K, V> entry, AttachState s) {
        if (entry.release() == 0) {
            reachedZero(entry, s);
        }
    }

    /** The last reference went: idle the object, or dispose it. */
    private void reachedZero(Entry<K, V> entry, AttachState s) {
        if (idle != null && lifecycle.get() == OPEN && (capacity == null || capacity.queueLength() == 0)) {
            hook(PoolHooks.Point.BEFORE_IDLE_PUT);
            entry.beginIdleSpell();
            try {
                idle.put(entry.key, entry.value);
            } catch (Throwable cacheFailed) { // the weigher, or the key's hashCode: dispose instead
                report(
                        PoolError.Kind.IDLE_CACHE_FAILED,
                        entry.key,
                        "the idle cache could not take the object of key " + Keys.describe(entry.key)
                                + "; it is disposed instead",
                        cacheFailed);
                removeIdleQuietly(entry);
                claimForDisposal(entry, s);
                return;
            }
            hook(PoolHooks.Point.AFTER_IDLE_PUT);
            if (entry.count() != 0) {
                // revived before this put landed, so its reviver found nothing to take back;
                // removing it only while it is live keeps a put of a later release in place
                try {
                    idle.asMap()
                            .computeIfPresent(
                                    entry.key,
                                    (key, value) -> value == entry.value && entry.count() != 0 ? null : value);
                } catch (Throwable cacheFailed) {
                    report(
                            PoolError.Kind.IDLE_CACHE_FAILED,
                            entry.key,
                            "the idle cache failed to let go of a revived" + " object of key "
                                    + Keys.describe(entry.key),
                            cacheFailed);
                }
            } else if (capacity != null && capacity.queueLength() > 0) {
                // a waiter queued meanwhile and may have looked for idle objects before the put:
                // either it sees this object in the cache, or this thread sees it in line
                reclaimForWaiter(entry, s);
            }
        } else { // no cache, closing, or someone waits for the permit this object holds
            claimForDisposal(entry, s);
        }
    }

    private void reclaimForWaiter(Entry<K, V> entry, AttachState s) {
        // the claim from exactly 0 decides between this thread, an evictor and a reviver
        if (entry.count() == 0 && claimForDisposal(entry, s)) {
            removeIdleQuietly(entry);
        }
    }

    /**
     * Claims an object at count 0 for disposal and disposes it in this thread's disposal loop.
     *
     * @return whether the claim succeeded (false if it was revived or is disposed already)
     */
    private boolean claimForDisposal(Entry<K, V> entry, AttachState s) {
        if (!entry.tryDispose()) {
            return false;
        }
        if (s.disposing) {
            s.disposals.add(entry);
            return true;
        }
        s.disposing = true;
        try {
            dispose(entry);
            runDisposals(s);
        } finally {
            s.disposing = false;
        }
        return true;
    }

    private void runDisposals(AttachState s) {
        Entry<?, ?> next;
        int ran = 0;
        while ((next = s.disposals.poll()) != null) {
            dispose(cast(next));
            ran++;
        }
        if (ran > AttachState.DISPOSALS_KEPT) {
            s.shrinkDisposals(); // a cascade's grown work list must not outlive it on a long-lived thread
        }
    }

    /** Runs the disposer of a claimed entry; attached, outside every lock. */
    private void dispose(Entry<K, V> entry) {
        try {
            slots.remove(entry.key, entry);
        } catch (Throwable keyFailed) {
            // the disposed entry stays in its slot until the key's next acquire drops it
        }
        instances.remove(new Identity(entry.value));
        try {
            disposer.accept(entry.value);
        } catch (Throwable e) { // a checked exception too: it must not stop the disposal loop
            report(
                    PoolError.Kind.DISPOSER_FAILED,
                    entry.key,
                    "the disposer failed for key " + Keys.describe(entry.key),
                    e);
        } finally {
            if (entry.permit != null) {
                entry.permit.close();
            }
            counters.disposals.increment();
        }
    }

    /**
     * Caffeine's eviction listener; it runs before Caffeine removes the entry. It finds the entry by
     * the object's identity, never through the key, whose {@code hashCode} may throw.
     */
    private void onEvicted(K key, V value, RemovalCause cause) {
        if (value == null) {
            return;
        }
        Entry<K, V> entry = instances.get(new Identity(value));
        if (entry != null) {
            enqueue(new Eviction<>(entry, evictionCause(cause), entry.idleSpell()));
            hook(PoolHooks.Point.EVICTION_QUEUED);
        }
    }

    private static EvictionCause evictionCause(RemovalCause cause) {
        switch (cause) {
            case EXPIRED:
                return EvictionCause.EXPIRED;
            case COLLECTED:
                return EvictionCause.COLLECTED;
            default:
                return EvictionCause.SIZE;
        }
    }

    /** The leak detector found {@code entry}'s handle unreachable while open. */
    void leaked(Entry<K, V> entry, Throwable site) {
        counters.leaks.increment();
        PoolEvents.Leak event = new PoolEvents.Leak();
        event.key = Keys.text(entry.key);
        event.site = site == null ? null : LeakTracker.describe(site);
        event.commit();
        enqueue(entry);
        report(
                PoolError.Kind.HANDLE_LEAKED,
                entry.key,
                "a handle for key " + Keys.describe(entry.key)
                        + " became unreachable without being closed; its reference was" + " released"
                        + (site == null ? "" : " (the cause shows where it was acquired)"),
                site);
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
                attacher.attach(CancellationToken.none(), attachMode == AttachMode.SHARED && !isAttached(), true);
        try {
            AttachState s = attacher.state();
            ArrayList<Object> pending = releases.takeAll(); // also releases whose flag is still in flight
            if (pending != null) {
                applyBatch(pending, s);
            }
            if (idle != null) {
                try {
                    idle.invalidateAll(); // EXPLICIT: the loop below disposes what was idle
                } catch (Throwable cacheFailed) { // a key's hashCode: the loop disposes them all the same
                    report(
                            PoolError.Kind.IDLE_CACHE_FAILED,
                            null,
                            "the idle cache failed to empty at close",
                            cacheFailed);
                }
            }
            s.disposing = true;
            try {
                for (Object slot : slots.values()) {
                    if (slot instanceof Entry) {
                        Entry<K, V> entry = cast(slot);
                        if (entry.tryDispose()) {
                            s.disposals.add(entry);
                        }
                    }
                }
                runDisposals(s);
            } finally {
                s.disposing = false;
            }
            reportOpenHandles();
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

    private void reportOpenHandles() {
        long open = 0;
        StringBuilder keys = new StringBuilder();
        int listed = 0;
        for (Object slot : slots.values()) {
            if (slot instanceof Entry) {
                int count = ((Entry<?, ?>) slot).count();
                if (count > 0) {
                    open += count;
                    if (listed++ < 10) {
                        keys.append(listed == 1 ? "" : ", ")
                                .append(Keys.describe(((Entry<?, ?>) slot).key))
                                .append(" (")
                                .append(count)
                                .append(')');
                    }
                }
            }
        }
        if (open == 0) {
            return;
        }
        report(
                PoolError.Kind.HANDLES_OPEN_AT_CLOSE,
                null,
                open + " handle(s) still open when the pool closed, on keys " + keys + (listed > 10 ? ", ..." : "")
                        + "; each object is disposed when its last handle closes (a handle never closed keeps its"
                        + " object unless leak detection finds it unreachable)",
                null);
        leaks.reportOpen();
    }

    public PoolStats stats() {
        long live = 0;
        long idleCount = 0;
        for (Object slot : slots.values()) {
            if (slot instanceof Entry) {
                int count = ((Entry<?, ?>) slot).count();
                if (count > 0) {
                    live++;
                } else if (count == 0) {
                    idleCount++;
                }
            }
        }
        return new PoolStats(
                live,
                idleCount,
                releases.size(),
                counters.drains.sum(),
                counters.creations.sum(),
                counters.disposals.sum(),
                counters.evictions(),
                counters.idleHits.sum(),
                capacity == null ? 0 : capacity.queueLength(),
                counters.leaks.sum());
    }

    /** A key's slot while its object is being created; completes with the entry, or null if none was made. */
    static final class Creation<K, V> extends CompletableFuture<Entry<K, V>> {
        final Thread creator;

        Creation(Thread creator) {
            this.creator = creator;
        }
    }

    /** A deferred disposal of an idle object Caffeine evicted. */
    static final class Eviction<K, V> {
        final Entry<K, V> entry;
        final EvictionCause cause;
        /** The idle spell the listener saw; a drain disposes only if the object is still in it. */
        final int spell;

        Eviction(Entry<K, V> entry, EvictionCause cause, int spell) {
            this.entry = entry;
            this.cause = cause;
            this.spell = spell;
        }
    }

    /** Identity of a pooled instance, so one instance cannot be pooled under two keys. */
    private static final class Identity {
        private final Object value;

        Identity(Object value) {
            this.value = value;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Identity && ((Identity) other).value == value;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(value);
        }
    }
}
