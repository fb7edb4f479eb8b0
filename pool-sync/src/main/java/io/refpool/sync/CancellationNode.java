package io.refpool.sync;

import io.refpool.sync.internal.VarHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.locks.LockSupport;

/**
 * One callback registered on a {@link CancellationSource}, and the protocol that decides whether,
 * when and on which thread it runs.
 *
 * <h2>Implementation notes</h2>
 *
 * <p><b>Phase.</b> A node's whole state is one {@code int} phase. Every transition that has a
 * competitor is a CAS; INVOKING&rarr;COMPLETED has none (only the dispatcher leaves INVOKING), so it
 * is a release store.
 *
 * <pre>
 *  from          to            by            when
 *  REGISTERED    CLAIMED       dispatcher    claim pass: cancel() selected the node
 *  CLAIMED       INVOKING      dispatcher    invoke pass: right before the callback runs
 *  INVOKING      COMPLETED     dispatcher    the callback returned or threw
 *  REGISTERED    UNREGISTERED  unregister()  no cancel() has selected the node yet
 *  CLAIMED       UNREGISTERED  unregister()  selected but not invoked: the callback is suppressed
 * </pre>
 *
 * <p>COMPLETED and UNREGISTERED are terminal. The CAS that leaves CLAIMED is the single decision
 * between "runs" and "does not run": the dispatcher's CLAIMED&rarr;INVOKING and unregister's
 * CLAIMED&rarr;UNREGISTERED cannot both succeed, so a callback runs at most once and
 * {@code unregister()} returns true exactly when the callback will never run. The dispatcher
 * claims every node of the list before it invokes the first callback; a callback that unregisters a
 * later node of the same dispatch therefore finds it CLAIMED, wins, and suppresses it.
 *
 * <p><b>Waiting for a running callback.</b> {@link #close()} on an INVOKING node waits for
 * COMPLETED. There is no lock or condition per node: waiting threads push themselves onto the
 * node's {@code waiters} stack with CAS and park; after the callback the dispatcher swaps the stack
 * for {@link #RELEASED} with one {@code getAndSet} and unparks everyone it took. A waiter whose
 * push fails because the field already holds RELEASED does not park. Because both sides act on the
 * same field with atomic read-modify-writes, no wakeup is lost, and a waiter that reads RELEASED
 * (acquire) also sees everything the callback did (the swap is a release).
 *
 * <p><b>Dispatch depth.</b> A per-thread counter records that this thread is running callbacks
 * (of any source, including inline callbacks of {@code register}). {@code close()} from such a
 * thread never waits: waiting there could wait for itself, or for another thread that is waiting
 * for this one.
 *
 * <p><b>Links.</b> {@code next} is written before the node is published by the CAS on the
 * source's head, and afterwards only by the source's single sweeper, which only ever points it
 * past UNREGISTERED nodes (see {@link CancellationSource}).
 */
final class CancellationNode implements Registration {
    static final int REGISTERED = 0;
    static final int CLAIMED = 1;
    static final int INVOKING = 2;
    static final int COMPLETED = 3;
    static final int UNREGISTERED = 4;

    /** The registration returned when no node is needed: by {@code none()} and inline callbacks. */
    static final Registration NO_OP = new NoOpRegistration();

    private static final Waiter RELEASED = new Waiter(null, null);

    private static final ThreadLocal<int[]> DISPATCH_DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    private static final VarHandle PHASE = VarHandles.field(MethodHandles.lookup(), "phase", int.class);
    private static final VarHandle NEXT = VarHandles.field(MethodHandles.lookup(), "next", CancellationNode.class);
    private static final VarHandle WAITERS = VarHandles.field(MethodHandles.lookup(), "waiters", Waiter.class);

    private final CancellationSource source;

    /**
     * Cleared by whoever ends the node (unregister or dispatcher), so a registration kept by the
     * caller does not keep the callback's captures alive. Only the thread that won the phase CAS
     * reads or writes it afterwards.
     */
    private Runnable callback;

    private int phase;
    private CancellationNode next;
    private Waiter waiters;

    CancellationNode(CancellationSource source, Runnable callback) {
        this.source = source;
        this.callback = callback;
    }

    /** Creates the marker the source's head holds once cancelled; it is never linked or invoked. */
    static CancellationNode marker() {
        return new CancellationNode(null, null);
    }

    @Override
    public boolean unregister() {
        int current = (int) PHASE.getAcquire(this);
        while (current == REGISTERED || current == CLAIMED) {
            int witness = (int) PHASE.compareAndExchange(this, current, UNREGISTERED);
            if (witness == current) {
                callback = null;
                if (current == REGISTERED) {
                    source.onUnregistered();
                }
                return true;
            }
            current = witness;
        }
        return false;
    }

    @Override
    public void close() {
        if (unregister() || (int) PHASE.getAcquire(this) != INVOKING || isDispatching()) {
            return;
        }
        awaitCompletion();
    }

    boolean isUnregistered() {
        return (int) PHASE.getAcquire(this) == UNREGISTERED;
    }

    CancellationNode next() {
        return (CancellationNode) NEXT.getAcquire(this);
    }

    /** Sets the link of a node not yet published; the publishing CAS on the head orders it. */
    void linkBeforePublish(CancellationNode below) {
        NEXT.set(this, below);
    }

    /** Points a published node past unregistered nodes; only the source's sweeper calls this. */
    void relinkRelease(CancellationNode below) {
        NEXT.setRelease(this, below);
    }

    /** {@return the first node from {@code node} on that is not unregistered, or null} */
    static CancellationNode firstLinked(CancellationNode node) {
        CancellationNode current = node;
        while (current != null && current.isUnregistered()) {
            current = current.next();
        }
        return current;
    }

    /**
     * Runs the callbacks of a list taken from a cancelled source, newest first, each at most once.
     * The caller has entered the dispatch (see {@link #enterDispatch()}).
     *
     * <p>The first failure decides what is thrown: itself if unchecked, else a wrapper made at once,
     * so that every later failure is suppressed on the object the caller catches, not on a cause
     * inside it.
     *
     * @param top the newest node of the list, or null
     * @throws RuntimeException the first exception a callback threw, the others suppressed
     * @throws Error the first error a callback threw, the others suppressed
     * @throws UndeclaredThrowableException wrapping the first checked exception a callback threw,
     *     the others suppressed on the wrapper
     */
    static void dispatch(CancellationNode top) {
        for (CancellationNode node = top; node != null; node = node.next()) {
            PHASE.compareAndSet(node, REGISTERED, CLAIMED);
        }
        Throwable first = null;
        Throwable thrown = null;
        for (CancellationNode node = top; node != null; node = node.next()) {
            Throwable failure = node.invokeIfClaimed();
            if (failure == null) {
                continue;
            }
            if (first == null) {
                first = failure;
                thrown = unchecked(failure);
            } else if (failure != first) {
                thrown.addSuppressed(failure);
            }
        }
        if (thrown instanceof RuntimeException) {
            throw (RuntimeException) thrown;
        }
        if (thrown != null) {
            throw (Error) thrown;
        }
    }

    private Throwable invokeIfClaimed() {
        if (!PHASE.compareAndSet(this, CLAIMED, INVOKING)) {
            return null;
        }
        Runnable action = callback;
        callback = null;
        try {
            action.run();
            return null;
        } catch (Throwable failure) {
            return failure;
        } finally {
            PHASE.setRelease(this, COMPLETED);
            releaseWaiters();
        }
    }

    private void releaseWaiters() {
        Waiter waiter = (Waiter) WAITERS.getAndSet(this, RELEASED);
        for (; waiter != null; waiter = waiter.next) {
            LockSupport.unpark(waiter.thread);
        }
    }

    private void awaitCompletion() {
        Thread self = Thread.currentThread();
        Waiter top = (Waiter) WAITERS.getAcquire(this);
        Waiter pushed = null;
        while (top != RELEASED) {
            if (pushed == null || pushed.next != top) {
                pushed = new Waiter(self, top);
            }
            Waiter witness = (Waiter) WAITERS.compareAndExchange(this, top, pushed);
            if (witness == top) {
                break;
            }
            top = witness;
        }
        boolean interrupted = false;
        while ((Waiter) WAITERS.getAcquire(this) != RELEASED) {
            LockSupport.park(this);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            self.interrupt();
        }
    }

    /** Runs a callback of a token that is already cancelled, on this thread, as a dispatch. */
    static void runInline(Runnable callback) {
        int[] depth = enterDispatch();
        try {
            callback.run();
        } finally {
            exitDispatch(depth);
        }
    }

    /** {@return this thread's dispatch depth counter, incremented} */
    static int[] enterDispatch() {
        int[] depth = DISPATCH_DEPTH.get();
        depth[0]++;
        return depth;
    }

    static void exitDispatch(int[] depth) {
        depth[0]--;
    }

    /** {@return whether this thread is inside a callback dispatch of any source} */
    static boolean isDispatching() {
        return DISPATCH_DEPTH.get()[0] > 0;
    }

    /** {@return {@code failure} itself if unchecked, else an {@link UndeclaredThrowableException} of it} */
    private static Throwable unchecked(Throwable failure) {
        if (failure instanceof RuntimeException || failure instanceof Error) {
            return failure;
        }
        return new UndeclaredThrowableException(failure, "a cancellation callback threw a checked exception");
    }

    @Override
    public String toString() {
        return "Registration[" + phaseName((int) PHASE.getAcquire(this)) + "]";
    }

    private static String phaseName(int phase) {
        switch (phase) {
            case REGISTERED:
                return "registered";
            case CLAIMED:
                return "claimed";
            case INVOKING:
                return "invoking";
            case COMPLETED:
                return "completed";
            default:
                return "unregistered";
        }
    }

    /** A thread waiting in {@link #close()}; an immutable stack cell. */
    private static final class Waiter {
        final Thread thread;
        final Waiter next;

        Waiter(Thread thread, Waiter next) {
            this.thread = thread;
            this.next = next;
        }
    }

    private static final class NoOpRegistration implements Registration {
        @Override
        public boolean unregister() {
            return false;
        }

        @Override
        public void close() {}

        @Override
        public String toString() {
            return "Registration[none]";
        }
    }
}
