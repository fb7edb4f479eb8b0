package io.refpool.core.internal;

import io.refpool.core.LeakDetection;
import io.refpool.core.PoolError;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.ref.Cleaner;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * Leak detection: a tracked handle is registered with a {@link Cleaner}; if it becomes unreachable
 * while open, the cleaning action releases its reference through the deferred queue (the cleaner
 * thread is never attached) and reports the site that acquired it.
 *
 * <p>The action ({@link Tracked}) refers to the entry and the pool, never to the handle, or the
 * handle could not become unreachable. A handle closed normally marks its action closed and cleans
 * it, which unregisters it without a report.
 */
final class LeakTracker {
    /**
     * The cleaner of tracked handles, made (with its thread, which runs for as long as the JVM) only
     * once a pool tracks one: a JVM whose pools track nothing runs no leak detector thread.
     */
    private static final class Cleaners {
        static final Cleaner CLEANER = Cleaner.create(runnable -> OwnThreads.daemon(runnable, "refpool-leak-detector"));
    }

    private final PoolState pool;
    private final PoolCounters counters;
    /** Where a leaked handle's reference goes: the deferred queue (the cleaner thread is never attached). */
    private final DeferredReleases<?, ?> releases;

    private final LeakDetection mode;
    private final int sampleInterval;
    private final Set<Tracked> open = ConcurrentHashMap.newKeySet();

    LeakTracker(
            PoolState pool,
            PoolCounters counters,
            DeferredReleases<?, ?> releases,
            LeakDetection mode,
            int sampleInterval) {
        this.pool = pool;
        this.counters = counters;
        this.releases = releases;
        this.mode = mode;
        this.sampleInterval = sampleInterval;
    }

    /**
     * {@return a new handle to {@code entry}, tracked if this mode picks it}; the caller already took
     * its reference, so nothing here may throw and lose it: tracking that fails leaves the handle
     * untracked
     *
     * @param alsoAtLeak run if the handle leaks, before its reference is released (the observer's
     *     hold of it ends there), or {@code null}; must not refer to the handle
     */
    <H> H newHandle(Entry<?, ?> entry, Runnable alsoAtLeak, Function<Tracked, H> handleOf) {
        Tracked tracked = null;
        try {
            tracked = track(entry);
            if (tracked != null) {
                tracked.alsoAtLeak = alsoAtLeak;
            }
        } catch (Throwable e) {
            pool.report(PoolError.Kind.HANDLE_LEAKED, entry.key, "leak tracking failed; the handle is not tracked", e);
        }
        H handle = handleOf.apply(tracked);
        if (tracked != null) {
            try {
                register(handle, tracked);
            } catch (Throwable e) {
                pool.report(
                        PoolError.Kind.HANDLE_LEAKED, entry.key, "leak tracking failed; the handle is not tracked", e);
            }
        }
        return handle;
    }

    /** {@return whether any handle may be tracked} (false: leak detection is off) */
    boolean tracks() {
        return mode != LeakDetection.OFF;
    }

    private void leaked(Entry<?, ?> entry, Throwable site) {
        counters.leaks.increment();
        PoolEvents.Leak event = new PoolEvents.Leak();
        event.pool = pool.name();
        event.key = Keys.text(entry.key);
        event.site = site == null ? null : describe(site);
        event.commit();
        // on the leak detector's thread, which every pool shares: as from the library's own timers,
        // a drain due at once goes to a drainer thread, so no drain and no disposer runs here
        releases.enqueueFromTimer(entry);
        pool.report(
                PoolError.Kind.HANDLE_LEAKED,
                entry.key,
                "a handle for key " + Keys.describe(entry.key) + " became unreachable without being closed; its"
                        + " reference was released" + (site == null ? "" : " (the cause shows where it was acquired)"),
                site);
    }

    /**
     * Reports the handles still open when the pool closed: the references held, by key, then each
     * tracked site. Every object not yet disposed counts, its key's current one or not (an
     * invalidated object a handle still holds). A held section and a thread lease hold a reference
     * of their own, so the summary counts references, not handles.
     */
    <K, V> void reportOpenAtClose(SlotTable<K, V> slots) {
        long[] open = {0};
        int[] listed = {0};
        StringBuilder keys = new StringBuilder();
        slots.forEachObject(entry -> {
            int count = entry.count();
            if (count > 0) {
                open[0] += count;
                if (listed[0]++ < 10) {
                    keys.append(listed[0] == 1 ? "" : ", ")
                            .append(Keys.describe(entry.key))
                            .append(" (")
                            .append(count)
                            .append(')');
                }
            }
        });
        if (open[0] > 0) {
            pool.report(
                    PoolError.Kind.HANDLES_OPEN_AT_CLOSE,
                    null,
                    open[0] + " reference(s) still held when the pool closed (by open handles, held sections and"
                            + " the thread leases handles borrow from), on keys " + keys
                            + (listed[0] > 10 ? ", ..." : "")
                            + "; each object is disposed when its last handle closes (a handle never closed keeps"
                            + " its object unless leak detection finds it unreachable)",
                    null);
        }
        reportOpen();
    }

    /** {@return the record of a new handle to {@code entry}, or {@code null} if it is not tracked} */
    <K, V> Tracked track(Entry<K, V> entry) {
        if (mode == LeakDetection.OFF
                || (mode == LeakDetection.SAMPLED && ThreadLocalRandom.current().nextInt(sampleInterval) != 0)) {
            return null;
        }
        return new Tracked(
                this, entry, new Throwable("the handle for key " + Keys.describe(entry.key) + " was acquired here"));
    }

    /** Registers the handle that owns {@code tracked}; called once the handle exists. */
    void register(Object handle, Tracked tracked) {
        open.add(tracked);
        try {
            tracked.cleanable = Cleaners.CLEANER.register(handle, tracked);
        } catch (Throwable e) {
            open.remove(tracked);
            throw e;
        }
    }

    /** Reports each tracked handle still open, with its acquisition site. */
    void reportOpen() {
        for (Tracked tracked : open) {
            pool.report(
                    PoolError.Kind.HANDLES_OPEN_AT_CLOSE,
                    tracked.entry.key,
                    "a handle for key " + Keys.describe(tracked.entry.key) + " was still open when the pool closed"
                            + " (the cause shows where it was acquired)",
                    tracked.site);
        }
    }

    static String describe(Throwable site) {
        StringWriter text = new StringWriter();
        site.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    /** The cleaning action and record of one tracked handle; it never refers to the handle. */
    static final class Tracked implements Runnable {
        private final LeakTracker tracker;
        private final Entry<?, ?> entry;
        private final Throwable site;
        private volatile boolean closedNormally;
        private volatile Throwable firstClose;
        private Cleaner.Cleanable cleanable;
        /** Run at a leak, before its release: the observer forgets its hold of the handle. */
        private Runnable alsoAtLeak;

        Tracked(LeakTracker tracker, Entry<?, ?> entry, Throwable site) {
            this.tracker = tracker;
            this.entry = entry;
            this.site = site;
        }

        boolean paranoid() {
            return tracker.mode == LeakDetection.PARANOID;
        }

        /**
         * The handle is being closed, under its lock: under {@code PARANOID} the site is recorded
         * before a second close can see the handle closed. Its message names the key only when
         * read, so no key's {@code toString} runs under the lock.
         */
        void closing() {
            if (paranoid()) {
                firstClose = new FirstClose(entry.key);
            }
        }

        /** The handle was closed: unregister without reporting. */
        void closed() {
            closedNormally = true;
            tracker.open.remove(this);
            Cleaner.Cleanable registered = cleanable;
            if (registered != null) { // null if registering failed: the handle went untracked
                registered.clean();
            }
        }

        /** {@return the first close's site, with this second close attached as suppressed} */
        Throwable closedAgain() {
            Throwable first = firstClose;
            if (first == null) {
                return null;
            }
            Throwable report =
                    new Throwable("the handle for key " + Keys.describe(entry.key) + " was closed again here");
            report.initCause(first);
            return report;
        }

        @Override
        public void run() {
            if (closedNormally) {
                return;
            }
            tracker.open.remove(this);
            Runnable also = alsoAtLeak;
            try {
                if (also != null) {
                    also.run(); // first: once the release is seen, nothing watches the handle any more
                }
            } finally {
                tracker.leaked(entry, site);
            }
        }
    }

    /** The site of a handle's first close; its message describes the key when read. */
    private static final class FirstClose extends Throwable {
        private static final long serialVersionUID = 1L;
        private final transient Object key;

        FirstClose(Object key) {
            this.key = key;
        }

        @Override
        public String getMessage() {
            return "the handle for key " + Keys.describe(key) + " was first closed here";
        }
    }
}
