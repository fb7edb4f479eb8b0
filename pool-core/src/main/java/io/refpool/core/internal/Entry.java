package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import io.refpool.sync.Guard;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One pooled object and its reference count: the single owner of the refcount protocol.
 *
 * <h2>Count</h2>
 *
 * <pre>
 *   count      to          by
 *   n >= 1     n + 1       acquire or share of a live object (any thread; share never waits)
 *   0          1           acquire reviving an idle object (the same getAndAdd: the attached
 *                          acquire's fast path revives too)
 *   n >= 1     n - 1       a handle's close applied attached (now, or from the deferred queue)
 *   0          DISPOSED    the attached thread that disposes it (no idle cache, retired by
 *                          invalidate, eviction, capacity, clearIdle, pool close); terminal
 *   0          CHECKING    with revive checks on (validator, max lifetime): the acquire that
 *                          revives it, instead of the +1 (see {@link Revival})
 *   CHECKING   1           that acquire, the check passed
 *   CHECKING   DISPOSED    that acquire, the check failed: it disposes the object itself
 * </pre>
 *
 * <p>With revive checks on, an acquire adds to a live count only ({@link #retainIfLive}), so no
 * idle object is lent unchecked; {@code CHECKING} is negative, so every other retain fails and
 * looks at {@link #verdict()}, and every claim from exactly 0 fails while the check runs.
 *
 * <p><b>Idle spells.</b> {@code idleSpells} counts the times the object went idle since someone
 * looked: the releaser that moved the count to 0 bumps it if the current spell was recorded (by an
 * idle put or an eviction), and otherwise leaves it, so a hot key revived and idled while the cache
 * holds it writes only its count. {@code cachedSpell} is the spell in which the idle cache last
 * took the object, or {@link #NOT_CACHED} once the cache let go of it: an object revived and idled
 * again while the cache still holds it costs no cache write at all. An eviction records the spell it
 * saw, so a drain can tell "idle since the cache decided" from "used since" without asking the
 * cache, which still holds the entry while its eviction listener runs.
 *
 * <pre>
 *   cachedSpell    to            by
 *   NOT_CACHED     spell s       the releaser that idled it in spell s, just before its put
 *   spell s        spell t       a drain that puts it again after an eviction (expired but used)
 *   any            NOT_CACHED    the drain of its eviction, or a claim that disposed it
 * </pre>
 *
 * <p>Reaching zero does not dispose by itself: the object then goes to the idle cache, or is
 * disposed through {@link #tryDispose(io.refpool.core.DisposalCause)} (by {@link EndOfLife} only), whose CAS from exactly 0 fails if the object was revived
 * in between. A deferred decrement is therefore a plain decrement of whatever the count is when it
 * is applied: a key acquired again in between stays live. {@code DISPOSED} is negative, so a
 * retain of a disposed object fails and a release of one is reported, never applied.
 */
final class Entry<K, V> extends EntryHotPadded implements Slot, Release, Attempt {
    /**
     * The count of a disposed object: far below zero, so a stray +1 of a retain that raced the
     * disposal (and takes it back at once) leaves the count negative. Any negative count means
     * disposed.
     */
    static final int DISPOSED = Integer.MIN_VALUE / 2;
    /** {@code cachedSpell} of an object the idle cache does not hold. */
    static final int NOT_CACHED = -1;
    /**
     * The count of an idle object an acquire claimed for its revive check: negative, far from
     * both 0 and {@link #DISPOSED}, so strays of either side never reach them.
     */
    static final int CHECKING = Integer.MIN_VALUE / 4;

    private static final VarHandle COUNT =
            FieldHandles.find(MethodHandles.lookup(), EntryHot.class, "count", int.class);
    private static final VarHandle IDLE_SPELLS =
            FieldHandles.find(MethodHandles.lookup(), EntryHot.class, "idleSpells", int.class);
    private static final VarHandle CACHED_SPELL =
            FieldHandles.find(MethodHandles.lookup(), EntryHot.class, "cachedSpell", int.class);
    private static final VarHandle IDLING =
            FieldHandles.find(MethodHandles.lookup(), Entry.class, "idling", boolean.class);
    private static final VarHandle RETIRED =
            FieldHandles.find(MethodHandles.lookup(), Entry.class, "retired", DisposalCause.class);
    private static final VarHandle VERDICT =
            FieldHandles.find(MethodHandles.lookup(), Entry.class, "verdict", Creation.class);
    private static final VarHandle HOLDERS =
            FieldHandles.find(MethodHandles.lookup(), Entry.class, "holders", LeaseHolders.class);
    private static final VarHandle SECTION =
            FieldHandles.find(MethodHandles.lookup(), Entry.class, "section", Section.class);

    /** Numbers every object in creation order: the one global order of two sections taken together. */
    private static final AtomicLong CREATED = new AtomicLong();

    final K key;
    final V value;
    /** The capacity permit this object holds from creation to disposal, or {@code null}. */
    final Guard permit;
    /** This object's place in the global order of sections; unique, never reused. */
    final long order = CREATED.getAndIncrement();
    /** When the object's maximum lifetime ends, in ticker nanoseconds; unread without one. */
    final long retireAt;

    /**
     * Completed (with {@code null}) when this object's disposer has returned: an acquirer of the key
     * that finds the object claimed for disposal waits for it, so the key's next object is created
     * only after its predecessor is disposed.
     */
    final Creation<K, V> retirement = new Creation<>(null, true);

    /** Why the object is disposed: written by the claim's winner, read by the same thread's disposal. */
    private DisposalCause disposalCause;

    /** The threads' leases on this object ({@link Leases}), made by the first; {@code null} until then. */
    @SuppressWarnings("unused") // accessed through HOLDERS
    private volatile LeaseHolders holders;

    /** The object's exclusive section, created by its first use; {@code null} until then. */
    @SuppressWarnings("unused") // accessed through SECTION
    private volatile Section section;

    /**
     * Set by the releaser while it idles the object (see {@code IdleTier.idle}); read by the
     * capacity scan, which only uses it to leave such an object to its releaser, so opaque accesses
     * do: a scan that misses it reclaims an idle object, which is also correct.
     */
    @SuppressWarnings("unused") // accessed through IDLING
    private boolean idling;

    /**
     * Why the object was retired, set once by {@code pool.invalidate} or {@code Handle.invalidate}
     * ({@code null} while it is not): at count 0 the object is disposed with this cause, never
     * idled. Volatile on both sides: an invalidation that reads the count after setting it and a
     * releaser that reads it after its decrement cannot both miss each other; one CAS decides
     * between two invalidations, so the cause is the winner's. A disposal claim settles it too
     * ({@link #settleCause}), right after its count CAS: an invalidation that comes later fails its
     * CAS and says it retired nothing, and one that came first gives the disposal its cause.
     */
    @SuppressWarnings("unused") // accessed through RETIRED
    private volatile DisposalCause retired;

    /**
     * The revive check under way, set by the acquire that checks before it claims the count, and
     * cleared by it before the check's acquirers are let go; {@code null} otherwise. One CAS from
     * {@code null} decides between two acquires that would check at once.
     */
    @SuppressWarnings("unused") // accessed through VERDICT
    private volatile Creation<K, V> verdict;

    /** {@return whether this call retired the object} (false if it was retired already) */
    boolean retire(DisposalCause cause) {
        return RETIRED.compareAndSet(this, (DisposalCause) null, cause);
    }

    boolean isRetired() {
        return RETIRED.getVolatile(this) != null;
    }

    /** {@return why the object was retired}, or {@code null} if it was not */
    DisposalCause retiredAs() {
        return (DisposalCause) RETIRED.getVolatile(this);
    }

    boolean isIdling() {
        return (boolean) IDLING.getOpaque(this);
    }

    void idling(boolean now) {
        IDLING.setOpaque(this, now);
    }

    Entry(K key, V value, Guard permit) {
        this(key, value, permit, Long.MAX_VALUE);
    }

    Entry(K key, V value, Guard permit, long retireAt) {
        this.key = key;
        this.value = value;
        this.permit = permit;
        this.retireAt = retireAt;
        COUNT.setRelease(this, 1);
    }

    int count() {
        return (int) COUNT.getAcquire(this);
    }

    /**
     * Test seam: runs in {@link #tryRetain} on a negative count, between the add and its take-back;
     * installed only where the seams are on ({@link TestSeams}), for every pool of the JVM.
     */
    static volatile Runnable strayAdded;

    /**
     * Adds a reference unless the object is disposed: one {@code getAndAdd}, which cannot fail and
     * so never retries on a contended count. On a disposed object the +1 is taken back at once; the
     * count stays negative throughout, so the disposal's claim (a CAS from exactly 0) and every
     * reader still see it disposed.
     *
     * @return the count before (0 means this call revived an idle object), or {@link #DISPOSED}
     */
    int tryRetain() {
        int before = (int) COUNT.getAndAdd(this, 1);
        if (before < 0) {
            if (TestSeams.ON) {
                Runnable seam = strayAdded;
                if (seam != null) {
                    seam.run();
                }
            }
            COUNT.getAndAdd(this, -1);
            return DISPOSED;
        }
        return before;
    }

    /**
     * Adds a reference to a live or idle object, as {@link #tryRetain}, and counts a revive (count 0
     * to 1) as an idle hit: the one retain of every acquire path.
     *
     * @param s the calling thread's state, or {@code null}: where the hit is counted ({@link PoolCounters#idleHit})
     * @return the count before, or {@link #DISPOSED}
     */
    int retainLive(PoolCounters counters, AttachState s) {
        int before = tryRetain();
        if (before == 0) {
            counters.idleHit(s); // the cache keeps its entry (see IdleTier)
        }
        return before;
    }

    /**
     * Adds a reference to a live or idle object, as {@link #retainLive}, but by CAS, never adding to
     * a negative count: for a pool with revive checks, where a negative count may be a check under
     * way. A plain retain's add lands on it as a stray, which a passing check keeps (see
     * {@link #endCheck}); its take-back, late, could then bring the object to 0 with nobody to
     * settle it.
     *
     * @return the count before, or {@link #DISPOSED} if it was negative (checked or disposed)
     */
    int retainUnlessNegative(PoolCounters counters, AttachState s) {
        int before = retainFrom(0);
        if (before == 0) {
            counters.idleHit(s);
        }
        return before < 0 ? DISPOSED : before;
    }

    /**
     * Adds a reference to a live object only (count above 0): never revives an idle one. A CAS
     * loop, used only with revive checks on.
     *
     * @return the count before, or -1 if the object is idle, being checked or disposed
     */
    int retainIfLive() {
        return retainFrom(1);
    }

    /**
     * A new reference for the holder of an open handle ({@code share()}, a section), only from a
     * positive count: the handle holds one, so a count at 0 (or below) means it was closed meanwhile
     * on another thread and the object went idle (or further). A +1 from 0 would revive the object
     * past its revive check, and its give-back, deferred on a detached thread, would leave it live
     * and lendable unchecked until a drain.
     *
     * @throws IllegalStateException naming {@code use} if the count was not positive
     */
    void retainForHolder(String use) {
        if (retainIfLive() < 0) {
            int c = count();
            throw new IllegalStateException(use + " on the handle for key " + Keys.describe(key)
                    + (c >= 0 || isChecking(c)
                            ? ", which another thread closed meanwhile"
                            : ", whose object is disposed"));
        }
    }

    /** {@return the count before} if it was at least {@code lowest} and one CAS added to it, else -1 */
    private int retainFrom(int lowest) {
        int c = (int) COUNT.getVolatile(this);
        while (c >= lowest) {
            int witness = (int) COUNT.compareAndExchange(this, c, c + 1);
            if (witness == c) {
                return c;
            }
            c = witness;
        }
        return -1;
    }

    /** {@return whether {@code count} is that of an object being checked} */
    static boolean isChecking(int count) {
        return count >= CHECKING && count < CHECKING / 2; // CHECKING plus strays of failed retains
    }

    /**
     * Claims an idle object (count exactly 0) for its revive check, publishing {@code pending} for
     * the acquirers that come meanwhile. @return whether this call claimed it
     */
    boolean claimForCheck(Creation<K, V> pending) {
        if (!VERDICT.compareAndSet(this, (Creation<K, V>) null, pending)) {
            return false; // another acquire is checking it
        }
        if (COUNT.compareAndSet(this, 0, CHECKING)) {
            return true;
        }
        VERDICT.setVolatile(this, (Creation<K, V>) null); // revived or disposed meanwhile
        pending.complete(null);
        return false;
    }

    /** {@return the revive check under way}, or {@code null} */
    @SuppressWarnings("unchecked")
    Creation<K, V> verdict() {
        return (Creation<K, V>) VERDICT.getVolatile(this);
    }

    /**
     * Ends this thread's check: the count becomes 1 (passed, the reference is the caller's) or
     * {@code DISPOSED} (failed, the caller disposes it with {@code failure}), then the acquirers
     * waiting for the verdict look again; a passed check's verdict carries this entry, which an
     * async waiter shares at once while it is live. Strays of failed retains are kept: an add, not a set.
     */
    void endCheck(DisposalCause failure) {
        Creation<K, V> pending = verdict();
        if (failure == null) {
            COUNT.getAndAdd(this, 1 - CHECKING);
        } else {
            disposalCause = settleCause(failure);
            retirement.runner = Thread.currentThread(); // the disposer runs on the checking thread
            COUNT.getAndAdd(this, DISPOSED - CHECKING);
        }
        VERDICT.setVolatile(this, (Creation<K, V>) null);
        pending.complete(failure == null ? this : null); // passed: its async waiters share it at once
    }

    /**
     * Removes a reference: one {@code getAndAdd}. A release nobody held (the count was not
     * positive) is taken back at once and thrown, so the count is left as it was.
     *
     * @return the count after
     * @throws DoubleRelease if the count was not positive: a release nobody held
     */
    int release() {
        int before = (int) COUNT.getAndAdd(this, -1);
        if (before <= 0) {
            COUNT.getAndAdd(this, 1);
            throw new DoubleRelease("release of key " + Keys.describe(key) + " with count "
                    + (before < 0 ? "below zero (already disposed)" : String.valueOf(before))
                    + ": a reference was released twice");
        }
        return before - 1;
    }

    /** {@return this object's section}, created on first use; every caller gets the same one */
    Section section() {
        Section existing = (Section) SECTION.getAcquire(this);
        if (existing != null) {
            return existing;
        }
        Section created = new Section();
        Section witness = (Section) SECTION.compareAndExchangeRelease(this, null, created);
        return witness == null ? created : witness;
    }

    /**
     * {@return where this object's leases start in a thread's table ({@link Leases})}: its order,
     * mixed; computed, not a field, which would move the words the layout test keeps apart
     */
    int leaseHash() {
        return (int) ((order * 0x9E3779B97F4A7C15L) >>> 32);
    }

    /** {@return the leases on this object}, their list made on first use */
    LeaseHolders holders() {
        LeaseHolders existing = (LeaseHolders) HOLDERS.getAcquire(this);
        if (existing != null) {
            return existing;
        }
        LeaseHolders made = new LeaseHolders();
        LeaseHolders witness = (LeaseHolders) HOLDERS.compareAndExchange(this, null, made);
        return witness == null ? made : witness;
    }

    /**
     * The object passed a revive check: a lease may be made on it again, if a sweep of a checked
     * pool had ended its leases ({@link LeaseHolders#checkDue}).
     */
    void checkedAgain() {
        LeaseHolders holders = holdersIfAny();
        if (holders != null) {
            holders.checked();
        }
    }

    /** {@return the leases on this object, or {@code null} if no thread ever leased it} */
    LeaseHolders holdersIfAny() {
        return (LeaseHolders) HOLDERS.getVolatile(this);
    }

    /** {@return this object's section, or {@code null} if nobody has used it yet} */
    Section sectionIfCreated() {
        return (Section) SECTION.getAcquire(this);
    }

    /**
     * Starts a new idle spell if someone recorded the current one ({@link #recordSpell}); called by
     * the releaser that moved the count to 0. A spell nobody recorded needs no successor: a record
     * and this check are each one access of the same word, so a zero this check sees unrecorded came
     * before the record, and every zero after a record leaves a new spell before it returns.
     *
     * @return the spell the object is idle in now
     */
    int beginIdleSpell() {
        for (; ; ) {
            int word = (int) IDLE_SPELLS.getVolatile(this);
            if ((word & 1) == 0) {
                return word >>> 1; // not recorded: no write
            }
            if (IDLE_SPELLS.compareAndSet(this, word, word + 1)) { // the next spell, unrecorded
                return (word + 1) >>> 1;
            }
        }
    }

    /**
     * {@return the current idle spell}, marked as recorded so the next zero starts a new one: for a
     * caller that keeps it to compare later (the idle put, an eviction)
     */
    int recordSpell() {
        return (int) IDLE_SPELLS.getAndBitwiseOr(this, 1) >>> 1;
    }

    /** {@return whether the idle cache holds this object} (a volatile read: see the table) */
    boolean isCached() {
        return (int) CACHED_SPELL.getVolatile(this) != NOT_CACHED;
    }

    /** Records that the idle cache takes this object in {@code spell}; called just before the put. */
    void cachedIn(int spell) {
        CACHED_SPELL.setVolatile(this, spell);
    }

    /** Records that the cache let go of this object. @return the spell it was cached in, or NOT_CACHED */
    int uncache() {
        return (int) CACHED_SPELL.getAndSet(this, NOT_CACHED);
    }

    /**
     * {@return whether the object was used since the idle cache took it}: live now, or idle in a
     * later spell; false if the cache does not hold it. The cache's order saw its put, not that use.
     */
    boolean usedSinceCached() {
        int cached = (int) CACHED_SPELL.getVolatile(this);
        return cached != NOT_CACHED && (count() > 0 || idleSpell() != cached);
    }

    /** {@return the current idle spell, read with acquire ordering} */
    int idleSpell() {
        return (int) IDLE_SPELLS.getAcquire(this) >>> 1;
    }

    /**
     * {@return whether this call moved the count from exactly 0 to {@code DISPOSED}}; the winner
     * records why, for the disposer, which runs on the winner's thread
     */
    boolean tryDispose(DisposalCause cause) {
        if (!COUNT.compareAndSet(this, 0, DISPOSED)) {
            return false;
        }
        disposalCause = settleCause(cause);
        retirement.runner = Thread.currentThread(); // the disposer runs on the claim's thread
        return true;
    }

    /**
     * Settles why the object, just claimed for disposal, is disposed: {@code own}, unless an
     * invalidation retired it first, whose cause it then keeps. One CAS on the retired word, so an
     * invalidation that runs after it fails its own and returns {@code false}: the object was
     * already on its way out by another path ({@code clearIdle}, an eviction, capacity, a release
     * with no cache), and that invalidation retired nothing.
     */
    private DisposalCause settleCause(DisposalCause own) {
        DisposalCause first = (DisposalCause) RETIRED.compareAndExchange(this, (DisposalCause) null, own);
        return first == null ? own : first;
    }

    /** {@return why this object is disposed}; read by the thread that claimed it */
    DisposalCause disposalCause() {
        return disposalCause;
    }

    @Override
    public String toString() {
        int c = count();
        return "Entry[" + Keys.describe(key) + ", " + (c < 0 ? "disposed" : "count=" + c) + "]";
    }

    /** A release of a reference nobody held: a defect of the pool's own accounting. */
    static final class DoubleRelease extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        DoubleRelease(String message) {
            super(message);
        }
    }
}
