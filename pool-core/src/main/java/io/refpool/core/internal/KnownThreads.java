package io.refpool.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The attach states of the threads that used one pool, kept so that a thread that ended attached
 * can be named: its hold of the gate is never given back, so every {@code stopTheWorld()} and the
 * pool's close wait for it for ever, and the one who waits should learn why.
 *
 * <p>A state is added once, when its thread first uses the pool (the thread-local's initial value),
 * never on an attach; so attaching writes nothing here. The set is swept when it has doubled since
 * the last sweep: the states of threads that ended detached are dropped, so it holds at most about
 * twice the states of the threads alive. A thread's writes to its own state happen before another
 * thread sees it not alive, so a dead thread's depth is read exactly.
 */
final class KnownThreads {
    /** No sweep below this many states. */
    private static final int FIRST_SWEEP = 64;

    private final Set<AttachState> states = ConcurrentHashMap.newKeySet();

    /** One sweep at a time; a thread that finds one running goes on. */
    private final AtomicBoolean sweeping = new AtomicBoolean();

    private volatile int sweepAt = FIRST_SWEEP;

    /** {@return {@code s}}, the state of a thread that is using the pool for the first time, now known */
    AttachState add(AttachState s) {
        states.add(s);
        if (states.size() >= sweepAt && sweeping.compareAndSet(false, true)) {
            try {
                states.removeIf(known -> !known.thread.isAlive() && known.depth == 0);
                sweepAt = Math.max(FIRST_SWEEP, 2 * states.size());
            } finally {
                sweeping.set(false);
            }
        }
        return s;
    }

    /** Forgets the state of a thread that dropped it (the pool closed). */
    void forget(AttachState s) {
        states.remove(s);
    }

    /**
     * {@return the states of threads that ended attached}, each returned once: they are forgotten
     * here, so a thread is reported by one caller only
     */
    List<AttachState> takeEndedAttached() {
        List<AttachState> ended = new ArrayList<>(0);
        for (AttachState s : states) {
            if (!s.thread.isAlive() && s.depth > 0 && states.remove(s)) {
                ended.add(s);
            }
        }
        return ended;
    }

    /** {@return how many states are known}, for tests */
    int size() {
        return states.size();
    }
}
