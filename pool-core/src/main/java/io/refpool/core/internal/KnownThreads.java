package io.refpool.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The attach states of the threads that used one pool, kept so that a thread that ended attached
 * can be named: its hold of the gate is never given back, so every {@code stopTheWorld()} and the
 * pool's close wait for it for ever, and the one who waits should learn why.
 *
 * <p>A thread's state is recorded when its thread-local starts (the thread's first use of the
 * pool, or its first use since its thread-locals were cleared, as some executors do between
 * tasks), never on an attach; so attaching writes nothing here. It is keyed by the thread: a state
 * replaced while attached lost its hold of the gate with the thread-locals, and is kept apart as
 * an orphan to be reported. The map is swept when it has doubled since the last sweep, and at a
 * thread's start a second or more after the last sweep: the states of threads that ended detached
 * are dropped. It so holds about twice the threads alive at the last sweep plus those started
 * since, and a burst of threads that all ended is dropped at the first start a second later, not
 * only once as many new threads came. A thread's writes to its own state happen before another
 * thread sees it not alive, so a dead thread's depth is read exactly.
 */
final class KnownThreads {
    /** No sweep below this many states. */
    private static final int FIRST_SWEEP = 64;

    private final Map<Thread, AttachState> states = new ConcurrentHashMap<>();

    /** States replaced while attached: their holds of the gate are lost. */
    private final Set<AttachState> orphans = ConcurrentHashMap.newKeySet();

    /** One sweep at a time; a thread that finds one running goes on. */
    private final AtomicBoolean sweeping = new AtomicBoolean();

    private volatile int sweepAt = FIRST_SWEEP;

    /** When ({@code System.nanoTime()}) the last sweep ran. */
    private volatile long sweptAtNanos = System.nanoTime();

    /** How long after the last sweep a thread's start sweeps again, whatever the map's size; tests lower it. */
    private volatile long sweepIntervalNanos = TimeUnit.SECONDS.toNanos(1);

    /** {@return {@code s}}, the new state of the calling thread (its thread-local just started), now known */
    AttachState add(AttachState s) {
        AttachState replaced = states.put(s.thread, s);
        if (replaced != null && replaced.depth > 0) { // this thread's own: its depth is exact
            orphans.add(replaced);
        }
        int size = states.size();
        if ((size >= sweepAt || size > FIRST_SWEEP && System.nanoTime() - sweptAtNanos >= sweepIntervalNanos)
                && sweeping.compareAndSet(false, true)) {
            try {
                states.values().removeIf(known -> !known.thread.isAlive() && known.depth == 0);
                sweepAt = Math.max(FIRST_SWEEP, 2 * states.size());
                sweptAtNanos = System.nanoTime();
            } finally {
                sweeping.set(false);
            }
        }
        return s;
    }

    /** Forgets the state of a thread that dropped it (the pool closed). */
    void forget(AttachState s) {
        states.remove(s.thread, s);
    }

    /**
     * {@return the states of threads that ended attached}, each returned once: they are forgotten
     * here, so a thread is reported by one caller only
     */
    List<AttachState> takeEndedAttached() {
        List<AttachState> ended = new ArrayList<>(0);
        for (AttachState s : states.values()) {
            if (!s.thread.isAlive() && s.depth > 0 && states.remove(s.thread, s)) {
                ended.add(s);
            }
        }
        return ended;
    }

    /**
     * {@return the states their threads lost while attached and still hold the gate}, each returned
     * once; an orphan its thread closed after all (it kept the attachment object) is dropped
     */
    List<AttachState> takeOrphans() {
        List<AttachState> taken = new ArrayList<>(0);
        for (AttachState s : orphans) {
            if (orphans.remove(s) && s.depth > 0) {
                taken.add(s);
            }
        }
        return taken;
    }

    /** Sets how long after a sweep a thread's start sweeps again; for tests. */
    void sweepIntervalForTests(long nanos) {
        sweepIntervalNanos = nanos;
    }

    /** {@return how many states are known}, for tests */
    int size() {
        return states.size() + orphans.size();
    }
}
