package io.refpool.core.internal;

import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.DisposalCause;
import io.refpool.core.ObjectValidator;
import io.refpool.core.PoolError;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The revive checks: the validator, run when an acquire revives an idle object, and the maximum
 * lifetime, read when an object reaches count 0 and when it is revived. The pool has none
 * ({@code null}) when both are off, and then reads neither the clock nor a count twice.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   object     to              by
 *   idle       CHECKING        the acquire that revives it ({@link Entry#claimForCheck}); an
 *                              acquire of the same key meanwhile waits for the verdict
 *   CHECKING   live (1)        that acquire: young enough, and the validator said yes
 *   CHECKING   DISPOSED        that acquire: too old (LIFETIME), or the validator said no or threw
 *                              (FAILED_VALIDATION); it disposes the object now, so its own next
 *                              look finds the slot free and creates the key's new object
 *   live       zero            a release at count 0: too old, disposed there (EndOfLife)
 * </pre>
 *
 * <p>The check runs on the acquiring thread, attached as the factory is, outside every internal
 * lock; only the claim is atomic, so a check that calls back into the pool deadlocks nothing (an
 * acquire of its own key would wait for itself and throws).
 */
final class Revival<K, V> {
    /** How a failed check's object is disposed: {@link EndOfLife#disposeChecked}. */
    @FunctionalInterface
    interface Disposal<K, V> {
        /** @return the object's capacity permit, kept for the key's new object, and its successor's slot */
        Attempt.Refused dispose(Entry<K, V> entry, Creation<K, V> successor);
    }

    /** The share of an object's lifetime its jitter may take off: up to a tenth. */
    static final int JITTER_DIVISOR = 10;

    private final PoolState pool;
    private final PoolCounters counters;
    /** {@code null}: no validator. */
    private final ObjectValidator<? super K, ? super V> validator;
    /** 0: no maximum lifetime. */
    private final long lifetimeNanos;

    private final Ticker ticker;
    private final Disposal<K, V> disposal;
    /** Numbers the pool's creations, the draw of each one's jitter. */
    private final AtomicLong created = new AtomicLong();

    private Revival(
            PoolState pool,
            PoolCounters counters,
            ObjectValidator<? super K, ? super V> validator,
            long lifetimeNanos,
            Ticker ticker,
            Disposal<K, V> disposal) {
        this.pool = pool;
        this.counters = counters;
        this.validator = validator;
        this.lifetimeNanos = lifetimeNanos;
        this.ticker = ticker;
        this.disposal = disposal;
    }

    /** {@return the checks of a pool}, or {@code null} if it has neither validator nor lifetime */
    static <K, V> Revival<K, V> of(
            PoolState pool,
            PoolCounters counters,
            ObjectValidator<? super K, ? super V> validator,
            long lifetimeNanos,
            Ticker ticker,
            Disposal<K, V> disposal) {
        if (validator == null && lifetimeNanos == 0) {
            return null;
        }
        return new Revival<>(pool, counters, validator, lifetimeNanos, ticker, disposal);
    }

    /**
     * {@return when an object created now retires}: now plus the lifetime, less a jitter of up to a
     * tenth of it, drawn from the creation's number in the pool so objects created together spread
     * out; {@code Long.MAX_VALUE} without a lifetime. Read by the creator, before the factory.
     *
     * @throws TickerFailed wrapping what the ticker threw: the creation fails, reported as the ticker's
     */
    long retireAt() {
        if (lifetimeNanos == 0) {
            return Long.MAX_VALUE;
        }
        long now;
        try {
            now = ticker.read();
        } catch (Throwable clock) {
            throw new TickerFailed(clock);
        }
        return now + lifetimeNanos - jitter(created.getAndIncrement(), lifetimeNanos);
    }

    /** The ticker threw before a factory ran: the creation fails as a factory's would, reported as the ticker's. */
    static final class TickerFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TickerFailed(Throwable clock) {
            super(null, clock, false, false);
        }
    }

    /** {@return the part of {@code lifetime} the object numbered {@code n} loses}: in [0, lifetime / 10] */
    static long jitter(long n, long lifetime) {
        long z = n * 0x9E3779B97F4A7C15L; // SplitMix64's finalizer: a spread, repeatable draw
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return Long.remainderUnsigned(z, lifetime / JITTER_DIVISOR + 1);
    }

    /**
     * {@return whether {@code entry} outlived its lifetime}; one clock read, only with a lifetime. A
     * ticker that throws is reported and counts as "not yet".
     */
    boolean expired(Entry<K, V> entry) {
        if (lifetimeNanos == 0) {
            return false;
        }
        try {
            return ticker.read() - entry.retireAt >= 0;
        } catch (Throwable failed) {
            pool.report(
                    PoolError.Kind.REVIVE_CHECK_FAILED,
                    entry.key,
                    "the ticker failed while reading the age of the object of key " + Keys.describe(entry.key) + ": "
                            + Keys.describeFailure(failed),
                    failed);
            return false;
        }
    }

    /**
     * Revives the idle {@code entry} through its check, or finds the check under way.
     *
     * @return {@code entry} with a reference taken for the caller (revived and checked), the
     *     {@link Creation} of another acquire's check to wait for, {@link Attempt.Refused}: this
     *     call's check failed and disposed the object, whose permit it carries, or {@code null}: look
     *     again (the count moved)
     */
    Attempt revive(Entry<K, V> entry, Creation<K, V> successor) {
        int count = entry.count();
        if (count == 0) {
            Creation<K, V> pending = Creation.check();
            if (!entry.claimForCheck(pending)) {
                return null;
            }
            return check(entry, successor);
        }
        return Entry.isChecking(count) ? entry.verdict() : null;
    }

    /**
     * {@return {@code entry} if the object this thread claimed passed}; if not, it is disposed now
     * and its permit is returned, kept for the key's new object ({@link Attempt.Refused})
     */
    private Attempt check(Entry<K, V> entry, Creation<K, V> successor) {
        DisposalCause failure = null;
        try {
            pool.hook(PoolHooks.Point.REVIVE_CLAIMED);
            DisposalCause retired = entry.retiredAs();
            if (retired != null) { // invalidated while idle, its disposal refused by this claim: it goes now
                failure = retired;
            } else if (expired(entry)) {
                failure = DisposalCause.LIFETIME;
            } else if (validator != null && !validator.isValid(entry.key, entry.value)) {
                failure = DisposalCause.FAILED_VALIDATION;
            }
        } catch (Throwable refused) { // a checked exception too: a failed check
            Waits.keepInterrupt(refused);
            failure = DisposalCause.FAILED_VALIDATION;
            pool.report(
                    PoolError.Kind.REVIVE_CHECK_FAILED,
                    entry.key,
                    "the validator failed for key " + Keys.describe(entry.key) + ": " + Keys.describeFailure(refused),
                    refused);
        } finally {
            entry.endCheck(failure);
        }
        if (failure != null) {
            return disposal.dispose(entry, successor);
        }
        counters.idleHit(null); // the checked revive: not the request's fast path
        return entry;
    }
}
