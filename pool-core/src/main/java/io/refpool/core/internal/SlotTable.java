package io.refpool.core.internal;

import io.refpool.core.ObjectCreationException;
import io.refpool.core.ObjectFactory;
import io.refpool.core.PoolClosedException;
import io.refpool.core.PoolError;
import io.refpool.sync.Guard;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The slot table: each key's one {@link Entry}, or the {@link Creation} under way, and single-flight
 * creation.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   slot          to            by
 *   (none)        Creation      the creator's putIfAbsent; it then runs the factory, unlocked (in
 *                               GLOBAL mode with its attachment suspended; a warm-up claims the
 *                               slot and runs the factory detached: {@link #warm})
 *   Creation      Entry         the creator, once the factory returned and the object is pooled;
 *                               a warm-up with no gate held, its reference then released as a
 *                               handle's off the attachment ({@link #warm})
 *   Creation      (none)        the creator: the factory failed, or no capacity (creation settled)
 *   Entry         (none)        the disposal of the entry (a disposed entry left behind by a key
 *                               that threw is dropped by the key's next acquire), or
 *                               invalidate, which retires it (disposed at count 0); a retired
 *                               entry left behind by a key that threw is dropped by the key's
 *                               next acquire, which gives back the reference it took
 *                               ({@link #dropRetired})
 *   Entry         Creation      the disposal of an object whose revive check refused it, in the
 *                               same step: the checking acquire creates the key's next object with
 *                               the refused one's permit ({@code refused}), so the permit never
 *                               goes to the capacity line and the key's acquirers wait for it
 *   Creation      (none)        an acquire that finds it settled (its creator's removal failed)
 * </pre>
 *
 * <p><b>The gate during a factory.</b> In {@code GLOBAL} mode the creator suspends its attachment
 * ({@link Attacher#suspended}) around the factory, unless it stops the world or runs an async step
 * (which must not wait for the gate on the thread that granted it), and takes the gate
 * back before it publishes or handles a failure, both of which run attached. A warm-up never takes
 * the gate for its object, in any mode: it claims, makes and publishes it detached, and its
 * reference goes back as a handle closed off the attachment does. Nobody waits for a creation
 * holding the gate ({@link #await}) but a section holder in the shared modes, whose creator needs
 * no gate back; and in {@code GLOBAL}
 * mode nobody waits for a section holding it ({@code Handles.waitForSection}), since the creator
 * may hold one. {@code close()} no longer waits for such a creation by taking the gate, so it waits
 * for it explicitly ({@link #awaitCreations}) before it disposes everything. A warm-up's creation
 * is also kept in {@code warming} from its claim until its reference is queued, after its object
 * replaced it in the slot, so the close waits for that release too; a thread running such a
 * creation must not wait for a close ({@link #createsOnThisThread}).
 *
 * <p>The factory runs outside any lock and never inside a map {@code compute}; concurrent acquirers
 * of the key wait for the one creation, which completes with the entry, with {@code null} when
 * nothing was made (they try again), or with the failure they all see: unchecked exceptions and
 * errors as thrown, a checked exception wrapped in one {@link ObjectCreationException}.
 *
 * <p>{@code instances} maps every pooled object by identity: one instance cannot be pooled under two
 * keys, and eviction and capacity reclaim find an object's entry without calling the key's
 * {@code hashCode}/{@code equals}, which may throw. Until the factory returns, a failure gives the
 * permit back and abandons the creation; after it, the object exists and holds its permit, so a
 * later failure (the key's {@code hashCode} while publishing) disposes the object with it.
 */
final class SlotTable<K, V> {
    /** Where a reference this table took but cannot hand out goes: {@link EndOfLife}. */
    interface Unusable<K, V> {
        /** Its creator could not publish the new object: {@link EndOfLife#unpublishable}. */
        void unpublishable(Entry<K, V> entry, AttachState s);

        /** A reference to a retired object that kept its slot (the key threw) goes back: {@link EndOfLife#releaseRetired}. */
        void releaseRetired(Entry<K, V> entry, AttachState s);
    }

    /** Where the factory's durations go, or {@code null}: timings off. */
    private final PoolTimings timings;

    private final PoolState pool;
    private final PoolCounters counters;
    private final Capacity<K, V> capacity;
    private final Attacher<K, V> attacher;
    private final Unusable<K, V> unusable;
    private final ObjectFactory<? super K, ? extends V> factory;
    /** {@code null} without revive checks. */
    private final Revival<K, V> revival;

    private final ConcurrentHashMap<K, Slot> slots = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Identity, Entry<K, V>> instances = new ConcurrentHashMap<>();
    /**
     * Warm-ups' creations from their slot until their reference is queued: a close waits for them
     * even once the object replaced the creation in its slot ({@link #awaitCreations}).
     */
    private final Set<Creation<K, V>> warming = ConcurrentHashMap.newKeySet();

    SlotTable(
            PoolState pool,
            PoolCounters counters,
            Capacity<K, V> capacity,
            Attacher<K, V> attacher,
            Unusable<K, V> unusable,
            ObjectFactory<? super K, ? extends V> factory,
            Revival<K, V> revival,
            PoolTimings timings) {
        this.revival = revival;
        this.pool = pool;
        this.counters = counters;
        this.capacity = capacity;
        this.attacher = attacher;
        this.unusable = unusable;
        this.factory = factory;
        this.timings = timings;
    }

    /** {@return the key's entry, or {@code null} if its slot is empty or holds a creation} */
    @SuppressWarnings("unchecked")
    Entry<K, V> entry(K key) {
        Slot slot = slots.get(key);
        return slot instanceof Entry ? (Entry<K, V>) slot : null;
    }

    /** {@return whether the key's slot holds an entry or a creation} */
    boolean occupied(K key) {
        return slots.get(key) != null;
    }

    /** {@return the entry of a pooled object, found by identity, or {@code null}} */
    Entry<K, V> byIdentity(V value) {
        return instances.get(new Identity(value));
    }

    /**
     * {@return the key of an object whose section the thread with id {@code threadId} holds}, or
     * {@code null}: a scan of every object not disposed yet
     */
    K sectionHeldBy(long threadId) {
        for (Entry<K, V> entry : instances.values()) {
            Section section = entry.sectionIfCreated();
            if (section != null && section.holder() == threadId) {
                return entry.key;
            }
        }
        return null;
    }

    /**
     * {@return the keys with an object live or idle now}, an unmodifiable snapshot, weakly
     * consistent: every pooled object, also one retired from its key's slot while still in use, as
     * {@code stats()} counts them
     */
    Set<K> liveKeys() {
        Set<K> keys = new HashSet<>();
        forEachObject(entry -> {
            int count = entry.count();
            if (count >= 0 || Entry.isChecking(count)) { // under its revive check: idle till the verdict
                keys.add(entry.key);
            }
        });
        return Collections.unmodifiableSet(keys);
    }

    /** Runs {@code action} on every entry (weakly consistent). */
    @SuppressWarnings("unchecked")
    void forEachEntry(Consumer<Entry<K, V>> action) {
        for (Slot slot : slots.values()) {
            if (slot instanceof Entry) {
                action.accept((Entry<K, V>) slot);
            }
        }
    }

    /**
     * Runs {@code action} on every object the pool has not disposed yet, its key's current one or
     * not (an invalidated object still held counts until it is disposed); weakly consistent.
     */
    void forEachObject(Consumer<Entry<K, V>> action) {
        for (Entry<K, V> entry : instances.values()) {
            action.accept(entry);
        }
    }

    /**
     * One attached attempt: share or revive the key's object, or create it.
     *
     * @param permit a capacity permit already held for a creation, or {@code null}
     * @return the key's entry with a reference taken for the caller, {@link Attempt.NeedsCapacity}, or the {@link Creation} to wait for (possibly
     *     this thread's own: an async continuation granted on a creating thread waits for it without
     *     blocking; a synchronous acquire refuses to wait for itself)
     */
    @SuppressWarnings("unchecked")
    Attempt attempt(K key, AttachState s, Guard permit) {
        for (; ; ) {
            Slot slot = slots.get(key);
            if (slot == null) {
                Creation<K, V> creation = new Creation<>(
                        Thread.currentThread(), false, s != null && !s.asyncStep && attacher.yieldsGate(s));
                if (slots.putIfAbsent(key, creation) == null) {
                    return create(key, creation, s, permit);
                }
            } else if (slot instanceof Entry) {
                Entry<K, V> entry = (Entry<K, V>) slot;
                if (revival == null ? entry.retainLive(counters, s) >= 0 : entry.retainIfLive() > 0) {
                    if (entry.isRetired()) {
                        dropRetired(entry, s);
                        continue;
                    }
                    if (permit != null) {
                        permit.close(); // someone else created it meanwhile
                    }
                    return entry;
                }
                if (revival != null) { // idle: revived through its check, or being checked
                    Attempt revived = revive(key, entry, s, permit);
                    if (revived == Attempt.LookAgain.INSTANCE) {
                        continue; // moved meanwhile: look again
                    }
                    if (revived != null) {
                        return revived;
                    }
                }
                if (!entry.retirement.isDone()) {
                    return entry.retirement; // claimed for disposal: its successor waits for the disposer
                }
                slots.remove(key, entry); // disposed, left behind by a key whose removal threw
            } else {
                Creation<K, V> creation = (Creation<K, V>) slot;
                if (!creation.isDone()) {
                    return creation;
                }
                slots.remove(key, creation); // abandoned by a creator whose removal of it failed
            }
        }
    }

    /**
     * The revive of {@code entry}, which {@link #attempt} found idle, being checked or disposed,
     * through its check; kept out of {@code attempt}, whose size the acquire paths' inlining sees.
     *
     * @return the attempt's answer; {@link Attempt.LookAgain}; or {@code null}: disposed, as the caller
     *     handles a disposed entry
     */
    private Attempt revive(K key, Entry<K, V> entry, AttachState s, Guard permit) {
        Attempt checked = revival.revive(
                entry,
                new Creation<>(Thread.currentThread(), false, s != null && !s.asyncStep && attacher.yieldsGate(s)));
        if (checked instanceof Attempt.Refused) {
            // this call's check refused and disposed the object: its permit makes the key's new
            // object, never going to the line, so this request gets one
            return refused(key, s, permit, (Attempt.Refused) checked);
        }
        if (checked == entry) {
            if (entry.isRetired()) {
                // invalidated during the check, which refused it both the disposal and the vacate of
                // an object in use (it saw neither 0 nor a positive count): the count is set before
                // this read, the cause before its read of the count
                try {
                    vacate(entry);
                } catch (Throwable keyFailed) { // the key threw: the acquire fails, and
                    unusable.releaseRetired(entry, s); // the revive's reference goes back
                    Capacity.giveBack(permit);
                    throw keyFailed;
                }
            }
            if (permit != null) {
                permit.close();
            }
            if (!entry.isRetired()) {
                entry.checkedAgain(); // a thread may lease it again
                capacity.published(entry); // live again: the key's waiters in line share it
            }
            return entry;
        }
        if (checked != null) {
            return checked; // another acquire's check: wait for its verdict
        }
        int count = entry.count();
        return count >= 0 || Entry.isChecking(count) ? Attempt.LookAgain.INSTANCE : null;
    }

    /**
     * The attempt after this thread's revive check refused the key's idle object and disposed it:
     * the key's new object is created with that object's permit ({@code refused.permit()}), in the
     * creation that took its slot before the key's other acquirers were let go, so the permit never
     * goes to the line for another key and this request gets a new object. A caller holding a
     * permit of its own creates with that one and gives the freed one back.
     */
    @SuppressWarnings("unchecked")
    private Attempt refused(K key, AttachState s, Guard callersPermit, Attempt.Refused refused) {
        Guard permit = callersPermit;
        if (permit == null) {
            permit = refused.permit();
        } else {
            Capacity.giveBack(refused.permit());
        }
        Creation<K, V> successor = (Creation<K, V>) refused.successor();
        if (successor != null) {
            return create(key, successor, s, permit); // the key's acquirers wait for it
        }
        // the slot had let go of the object (an invalidation vacated it): look again, holding the permit
        Attempt again;
        try {
            again = attempt(key, s, permit);
        } catch (Throwable failed) {
            if (callersPermit == null) {
                Capacity.giveBack(permit); // at most once: a creation that took it gave it back already
            }
            throw failed;
        }
        if (callersPermit == null && !(again instanceof Entry)) {
            Capacity.giveBack(permit); // not used for a creation: a creation to wait for
        }
        return again;
    }

    /**
     * A warm-up's creation of {@code key}, only if its slot is empty and a permit is free, made
     * where the thread holds no gate it must keep. The factory runs detached (or, for a warm-up run
     * inline on an attached thread, suspended only where {@link Attacher#yieldsGate} says so), and
     * the object is published with no gate held: the entry goes in its slot, the key's waiters in
     * line share it, {@code release} gives back the warm-up's reference, and only then is the
     * creation completed, so {@code close()}, which waits for it, finds that release pending and
     * applies it. If the key throws while publishing, the object is disposed attached when the gate
     * is free ({@link Attacher#runInternal}) and the failure is thrown.
     *
     * @return the new entry, {@code null} if the key has an object or a creation, or {@link
     *     Attempt.NeedsCapacity} if no permit is free
     */
    Attempt warm(K key, AttachState s, Consumer<Entry<K, V>> release) {
        Guard permit = null;
        if (capacity.isBounded()) {
            permit = capacity.tryTakeFree();
            if (permit == null) {
                return Attempt.NeedsCapacity.INSTANCE;
            }
        }
        Creation<K, V> creation = new Creation<>(Thread.currentThread(), false, s.depth == 0 || attacher.yieldsGate(s));
        boolean mine = false;
        try {
            mine = slots.putIfAbsent(key, creation) == null;
        } finally {
            if (!mine) {
                Capacity.giveBack(permit); // the key has an object or a creation, or its hashCode threw
            }
        }
        if (!mine) {
            return null;
        }
        warming.add(creation);
        try {
            Entry<K, V> entry = make(key, creation, s, permit);
            putInSlot(
                    key,
                    creation,
                    entry,
                    () -> attacher.runInternal(attached -> unusable.unpublishable(entry, attached)));
            try {
                capacity.published(entry); // the warm-up's reference keeps the count above 0 meanwhile
            } finally { // whatever fails, the reference goes back and the creation's waiters look again
                try {
                    release.accept(entry);
                } finally {
                    creation.complete(entry);
                }
            }
            return entry;
        } finally {
            warming.remove(creation);
        }
    }

    /**
     * {@return an object that another thread claimed for disposal and whose disposal has not
     * finished}, its permit not yet given back, or {@code null}: a scan of every object not disposed
     * yet, made only by an attached acquire about to refuse for capacity. This thread's own claims
     * (waiting in its disposal loop) are not returned: it would wait for itself.
     */
    Entry<K, V> disposalInFlight() {
        Thread me = Thread.currentThread();
        for (Entry<K, V> entry : instances.values()) {
            int count = entry.count();
            if (count < 0 && !Entry.isChecking(count) && !entry.retirement.isDone() && entry.retirement.runner != me) {
                return entry;
            }
        }
        return null;
    }

    /**
     * Throws, as {@link #await} does, if this thread runs the creation, revive check or disposal of
     * {@code key}'s object that an acquire of {@code key} would wait for: a timed acquire, which
     * waits through its async form, would otherwise wait out its limit for itself.
     */
    @SuppressWarnings("unchecked")
    void refuseWaitingForItself(K key) {
        Slot slot = slots.get(key);
        Creation<K, V> running = null;
        if (slot instanceof Creation) {
            running = (Creation<K, V>) slot;
        } else if (slot instanceof Entry) {
            Entry<K, V> entry = (Entry<K, V>) slot;
            Creation<K, V> verdict = Entry.isChecking(entry.count()) ? entry.verdict() : null;
            running = verdict != null ? verdict : entry.retirement;
        }
        if (running != null && running.runner == Thread.currentThread() && !running.isDone()) {
            throw waitForItself(key, running);
        }
    }

    /** {@return the refusal of an acquire of {@code key} on the thread running {@code creation}} */
    private IllegalStateException waitForItself(Object key, Creation<?, ?> creation) {
        String acquire = "acquire(" + Keys.describe(key) + ") in pool '" + pool.name() + "'";
        return new IllegalStateException(
                creation.retirement
                        ? acquire + " on the thread that is disposing that key's object (from a disposer of this"
                                + " thread's disposal loop): the key's next object is created only after the disposer"
                                + " returns, so it would wait for itself"
                        : creation.check
                                ? acquire + " on the thread that is checking that key's idle object (the validator"
                                        + " acquired its own key): it would wait for itself"
                                : acquire + " on the thread that is creating that key's object (the factory acquired"
                                        + " its own key): it would wait for itself");
    }

    /**
     * Waits for another thread's creation of {@code key}, detached: the creator may need the gate
     * (a factory that re-attaches after blocking work in {@code detached()}), so nobody waits for a
     * creation while holding it, except a section holder in the shared modes, which never waits for
     * the gate either and so waits attached (a factory that calls {@code detached()} then races a
     * {@code stopTheWorld()}, as the guide says). An interrupt ends the wait (the creation goes on) once the thread
     * is attached again, as every blocking wait of the pool: a {@code WaitInterruptedException}
     * with the interrupt status set.
     */
    void await(K key, Creation<K, V> creation, AttachState s) {
        await(key, creation, null, s);
    }

    /**
     * {@link #await}, for {@code creation} and then {@code after} ({@code null}: none), a stage
     * that runs when it ends: what the creation's end does for this waiter is done when this returns.
     */
    void await(K key, Creation<K, V> creation, Function<Creation<K, V>, CompletableFuture<?>> after, AttachState s) {
        if (creation.runner == Thread.currentThread()) {
            throw waitForItself(key, creation);
        }
        CompletableFuture<?> until = after == null ? creation : after.apply(creation);
        if (!until.isDone()) {
            if (!attacher.isGlobal() && attacher.sectionHeldBy() != null) {
                // a section holder never waits for the gate, which detached() would take back
                // behind a stopTheWorld() that may wait for a reader of that section; in the shared
                // modes the creator needs no gate back to publish, so this waits attached
                awaitDone(key, creation, until);
            } else {
                attacher.detached(s, () -> awaitDone(key, creation, until));
            }
        }
        if (creation.isCompletedExceptionally()) {
            try {
                creation.join();
            } catch (CompletionException e) {
                throw unchecked(e.getCause());
            }
        }
    }

    /** Parks until {@code creation} is done, however it ends; returns null, for a supplier. */
    private Void awaitDone(K key, Creation<K, V> creation, CompletableFuture<?> until) {
        try {
            until.get();
        } catch (InterruptedException e) {
            throw Waits.interrupted(
                    "the " + creation.what() + " of the object of key " + Keys.describe(key) + " in pool '"
                            + pool.name() + "'",
                    e);
        } catch (ExecutionException | CancellationException failed) {
            // done: the caller reads the outcome
        }
        return null;
    }

    /**
     * Waits until no other thread's gate-free creation is in flight: {@code close()}, attached,
     * before it disposes everything. A factory that gives the gate up ({@link #create}) is not
     * waited for by taking the gate, so close waits for it here, with the gate given up, since the
     * creator takes the gate back to publish. Other creations are waited for as before, by taking
     * the gate, or not at all by a close nested in an attach. The pool is closing: a creation that starts after its slot was
     * scanned sees that and fails. The closing thread's own creations (a factory that called
     * {@code close()}) are not waited for; their objects are disposed when their count reaches 0.
     * Not interruptible, as {@code close()} is not.
     */
    void awaitCreations(AttachState s) {
        Thread me = Thread.currentThread();
        for (; ; ) {
            Creation<K, V> running = null;
            for (Slot slot : slots.values()) {
                if (slot instanceof Creation) {
                    @SuppressWarnings("unchecked")
                    Creation<K, V> creation = (Creation<K, V>) slot;
                    if (creation.gateFree && creation.runner != me && !creation.isDone()) {
                        running = creation;
                        break;
                    }
                }
            }
            for (Creation<K, V> creation : warming) { // out of its slot, its reference not yet queued
                if (running == null && creation.runner != me && !creation.isDone()) {
                    running = creation;
                }
            }
            if (running == null) {
                return;
            }
            Creation<K, V> awaited = running;
            attacher.suspended(s, () -> awaitUninterruptibly(awaited));
        }
    }

    /**
     * {@return whether the calling thread runs a creation a close waits for} (a gate-free factory,
     * a warm-up's): a scan, for a thread about to wait for a close
     */
    boolean createsOnThisThread() {
        Thread me = Thread.currentThread();
        for (Creation<K, V> creation : warming) {
            if (creation.runner == me && !creation.isDone()) {
                return true;
            }
        }
        for (Slot slot : slots.values()) {
            if (slot instanceof Creation && ((Creation<?, ?>) slot).runner == me && !((Creation<?, ?>) slot).isDone()) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return whether the calling thread runs a creation or a revive check that another thread's
     * acquire may be waiting for}: one scan, for a close or flush about to wait for other threads'
     * batches, whose disposers may be such acquires
     */
    @SuppressWarnings("unchecked")
    boolean mayBeAwaitedOnThisThread() {
        Thread me = Thread.currentThread();
        for (Creation<K, V> creation : warming) {
            if (creation.runner == me && !creation.isDone()) {
                return true;
            }
        }
        for (Slot slot : slots.values()) {
            Creation<K, V> running = null;
            if (slot instanceof Creation) {
                running = (Creation<K, V>) slot;
            } else if (Entry.isChecking(((Entry<K, V>) slot).count())) {
                running = ((Entry<K, V>) slot).verdict();
            }
            if (running != null && running.runner == me && !running.isDone()) {
                return true;
            }
        }
        return false;
    }

    private static Void awaitUninterruptibly(Creation<?, ?> creation) {
        Waits.uninterruptibly(() -> {
            try {
                creation.get();
            } catch (ExecutionException | CancellationException failed) {
                // done: its creator deals with the outcome
            }
        });
        return null;
    }

    /**
     * Creates the object of {@code key} for the creation this thread put in its slot; its factory
     * runs with the thread's attachment suspended if the creation is {@linkplain Creation#gateFree
     * gate-free}: in {@code GLOBAL} mode.
     */
    private Attempt create(K key, Creation<K, V> creation, AttachState s, Guard heldPermit) {
        Guard permit = heldPermit;
        if (permit == null && capacity.isBounded()) {
            try {
                permit = capacity.take(s);
            } catch (Throwable failure) {
                throw failed(key, creation, null, failure);
            }
            if (permit == null) {
                abandon(key, creation, null); // nothing was made; waiters try again
                return Attempt.NeedsCapacity.INSTANCE;
            }
        }
        Entry<K, V> entry = make(key, creation, s, permit);
        publish(key, creation, entry, s);
        return entry;
    }

    /**
     * Runs the factory for a creation holding {@code permit} ({@code null}: unbounded), with the
     * attachment suspended if the creation is gate-free, and takes the object in.
     *
     * @return the new entry, holding the permit and one reference, the creator's
     */
    private Entry<K, V> make(K key, Creation<K, V> creation, AttachState s, Guard permit) {
        V value;
        long retireAt = Long.MAX_VALUE;
        try {
            if (pool.isClosed()) {
                throw new PoolClosedException(pool.onClosedPool("acquire(" + Keys.describe(key) + ")"));
            }
            long begun = timings == null ? 0 : System.nanoTime();
            if (revival != null) { // before the factory: a ticker that throws leaves nothing made
                retireAt = revival.retireAt();
            }
            value = FactoryCall.run(factory, key, attacher, s, creation.gateFree);
            if (value == null) {
                throw new NullPointerException("the factory returned null for key " + Keys.describe(key));
            }
            if (timings != null) { // a creation: the factory returned an object
                timings.since(PoolTimings.Timing.CREATION, begun);
            }
        } catch (Throwable failure) { // also checked exceptions, which code in other JVM languages throws
            throw failed(key, creation, permit, failure);
        }
        Entry<K, V> entry = new Entry<>(key, value, permit, retireAt);
        if (instances.putIfAbsent(new Identity(value), entry) != null) {
            Capacity.giveBack(permit); // the instance belongs to another key: not this creation's to dispose
            IllegalStateException shared =
                    new IllegalStateException("the factory returned, for key " + Keys.describe(key)
                            + ", an instance that is already pooled under another key: each key needs its own object");
            abandon(key, creation, shared);
            pool.report(PoolError.Kind.FACTORY_FAILED, key, shared.getMessage(), shared);
            throw shared;
        }
        counters.creations.increment(); // from here on the object is the pool's to dispose
        return entry;
    }

    /**
     * A creation failed before its object existed: the permit goes back, the creation is abandoned
     * with the failure its acquirers see, and the failure is reported (but a closed pool's).
     *
     * @return the failure to throw: unchecked as it is, checked wrapped; an error is thrown here
     */
    private RuntimeException failed(K key, Creation<K, V> creation, Guard permit, Throwable thrown) {
        boolean ticker = thrown instanceof Revival.TickerFailed;
        Throwable failure = ticker ? thrown.getCause() : thrown;
        Waits.keepInterrupt(failure);
        Throwable shaped = failure instanceof RuntimeException || failure instanceof Error
                ? failure
                : new ObjectCreationException(
                        (ticker ? "the ticker, timing a new object of key " : "the factory for key ")
                                + Keys.describe(key) + " in pool '" + pool.name() + "' threw "
                                + Keys.describeFailure(failure),
                        failure);
        Capacity.giveBack(permit);
        abandon(key, creation, shaped);
        if (ticker) {
            pool.report(
                    PoolError.Kind.REVIVE_CHECK_FAILED,
                    key,
                    "the ticker failed while timing a new object of key " + Keys.describe(key)
                            + ", before its factory ran; nothing was made: " + Keys.describeFailure(failure),
                    failure);
        } else if (!(failure instanceof PoolClosedException)) {
            pool.report(
                    PoolError.Kind.FACTORY_FAILED,
                    key,
                    "the factory failed for key " + Keys.describe(key) + ": " + Keys.describeFailure(failure),
                    failure);
        }
        return unchecked(shaped);
    }

    /** Puts a made object in its key's slot, attached, and shares it with the key's waiters in line. */
    private void publish(K key, Creation<K, V> creation, Entry<K, V> entry, AttachState s) {
        putInSlot(key, creation, entry, () -> unusable.unpublishable(entry, s));
        creation.complete(entry);
        capacity.published(entry); // the key's waiters in line share it
    }

    /**
     * Replaces the creation in its key's slot by the made object's entry. If the key's {@code
     * hashCode} or {@code equals} throws, the creation is abandoned, {@code unpublishable} disposes
     * the object, and the key's failure is thrown.
     */
    private void putInSlot(K key, Creation<K, V> creation, Entry<K, V> entry, Runnable unpublishable) {
        try {
            slots.replace(key, creation, entry);
        } catch (Throwable keyFailed) {
            abandon(key, creation, keyFailed);
            unpublishable.run();
            throw unchecked(keyFailed);
        }
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

    /**
     * Takes a live or idle entry out of its key's slot, so the key's next acquire creates a new
     * object; the entry stays findable by identity until it is disposed.
     *
     * @return whether this call took it out (false: it left already)
     */
    boolean vacate(Entry<K, V> entry) {
        return slots.remove(entry.key, entry);
    }

    /**
     * Gives back a reference just taken to a retired entry that is still in its key's slot (the key
     * threw when the entry was retired), and takes the entry out of the slot, so the caller looks
     * again. At count 0 the object is disposed.
     *
     * @throws RuntimeException what the key's {@code hashCode} or {@code equals} throws again
     */
    void dropRetired(Entry<K, V> entry, AttachState s) {
        unusable.releaseRetired(entry, s);
        slots.remove(entry.key, entry);
    }

    /**
     * Takes a disposed entry out of the table once its disposer has returned, and lets the key's
     * acquirers waiting for that look again.
     */
    void disposed(Entry<K, V> entry) {
        disposed(entry, null);
    }

    /**
     * {@link #disposed(Entry)}, where {@code successor} ({@code null}: none) takes the entry's slot
     * in the same step, so the key's acquirers woken here wait for that creation.
     *
     * @return whether {@code successor} took the slot
     */
    boolean disposed(Entry<K, V> entry, Creation<K, V> successor) {
        boolean succeeded = false;
        try {
            if (successor == null) {
                slots.remove(entry.key, entry);
            } else {
                succeeded = slots.replace(entry.key, entry, successor);
            }
        } catch (Throwable keyFailed) {
            // the disposed entry stays in its slot until the key's next acquire drops it
        }
        instances.remove(new Identity(entry.value));
        pool.hook(PoolHooks.Point.SLOT_FREED);
        entry.retirement.complete(null);
        return succeeded;
    }

    /** {@return {@code failure} to throw: unchecked as it is, checked wrapped}; an error is thrown here */
    static RuntimeException unchecked(Throwable failure) {
        if (failure instanceof RuntimeException) {
            return (RuntimeException) failure;
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        return new ObjectCreationException(
                "creating an object failed with " + failure.getClass().getName(), failure);
    }
}
