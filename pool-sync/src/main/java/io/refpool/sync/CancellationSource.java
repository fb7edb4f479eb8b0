package io.refpool.sync;

import io.refpool.sync.internal.VarHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * Requests cancellation of the operations that hold its {@link #token()}.
 *
 * <pre>{@code
 * try (CancellationSource source = new CancellationSource()) {
 *     source.cancelAfter(Duration.ofSeconds(5));
 *     CancellationToken token = source.token();
 *     try (Registration r = token.register(() -> System.out.println("giving up"))) {
 *         while (!token.isCancellationRequested()) {
 *             doSomeWork();
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>The first {@link #cancel()} runs every callback registered on the token synchronously on the
 * cancelling thread, newest first, each at most once. A callback registered after that runs at
 * once, on the registering thread. A source {@linkplain #linkedTo linked} to other tokens is
 * cancelled when any of them is. {@link #close()} detaches the source from its parents and stops
 * its timer; it does not cancel, and the source can still be cancelled afterwards.
 *
 * <p>All methods are thread-safe. None of them holds a lock while a callback runs.
 */
public final class CancellationSource implements AutoCloseable {
    /*
     * Implementation notes.
     *
     * State. The source is a Treiber stack of CancellationNodes, newest on top. The head field
     * holds the whole cancellation state:
     *
     *   head              meaning
     *   null              not cancelled, nothing linked
     *   a node            not cancelled, nodes linked from it through next
     *   CANCELLED         cancelled; the list was taken by the cancel() that wrote this marker
     *
     *   from              to                by
     *   null or node      newer node        register (CAS)
     *   node              older node/null   register's prune or the sweeper (CAS), past UNREGISTERED
     *                                       nodes only
     *   null or node      CANCELLED         cancel (getAndSet); terminal
     *
     * Because one getAndSet both decides the winner of cancel() and takes the list, there is no
     * window in which the source is cancelled but still accepts nodes: a register() that pushed
     * before the swap is dispatched by cancel(), one that sees CANCELLED runs its callback inline.
     * isCancellationRequested() is one acquire load of head.
     *
     * Unlinking. unregister() only moves a node's phase (see CancellationNode) and bumps
     * unregisteredSinceSweep; it never takes a lock and never unlinks. Unregistered nodes leave
     * the list in two ways. A push links its node below the leading run of unregistered nodes,
     * so the common register/unregister/register pattern keeps the list at one node. And when the
     * unregistrations since the last sweep reach half of the live nodes that sweep found (and at
     * least MIN_SWEEP_BACKLOG), the unregistering thread sweeps the list. That bounds the garbage
     * by about half the peak of live registrations, and the sweep's cost, which is the list's
     * length, is paid for by the unregistrations and pushes since the last one.
     *
     * The sweeper. At most one thread sweeps at a time (the sweeping flag). It moves head past a
     * leading run of UNREGISTERED nodes with one CAS (if a push won, it sweeps from the new head
     * instead, leaving only that head itself for later), then walks the list. It is the only
     * thread that writes next fields of published nodes, and it only points a node past a run of
     * UNREGISTERED nodes, which are terminal. Removed nodes keep their own next, so a reader that
     * holds a removed node (a pushing thread, the dispatcher walking a list it took) still reaches
     * every later node. Pushes only add on top; cancel() only swaps head. A stale read of next or
     * of a phase therefore costs at most a missed unlink, never a lost live node.
     *
     * ABA on head: head can return to a node X only when the sweeper moves head past nodes pushed
     * above X, which requires all of them to be UNREGISTERED; a push that read X earlier and links
     * its node to X loses nothing but garbage.
     *
     * Timer and links. The timer field holds null, the pending ScheduledFuture, or CLOSED after
     * close(); it moves by CAS/getAndSet, so a cancelAfter() racing close() either fails with
     * IllegalStateException or has its timer cancelled by close(). A timer cancels only by taking
     * itself out of the field (CAS from itself to null), so one that fires before it was installed,
     * or after close() or a later cancelAfter() took it out, cancels nothing: the first is fired
     * again by the arming thread once installed (Timer). parentLinks holds the
     * registrations of a linked source on its parents until close() or cancel() takes them with
     * getAndSet. Where a plain field is set and the other side's state must then be checked
     * (cancelAfter vs cancel, linkedTo vs cancel), both sides use volatile accesses, so at least
     * one of them sees the other (Dekker).
     *
     * whenCancelled(). The signal field holds null, a Signal (future plus its read-only view),
     * or FIRED. cancel() swaps in FIRED and completes the Signal it took; whenCancelled() installs
     * a Signal with CAS, so one of them always sees the other.
     *
     * No internal lock exists, so none is held while a callback runs; the dispatch runs on the
     * cancelling thread after the state change, with the thread's dispatch depth raised.
     */

    /** Fewest unregistrations that start a sweep; below this a sweep costs more than it frees. */
    static final int MIN_SWEEP_BACKLOG = 16;

    private static final CancellationNode CANCELLED = CancellationNode.marker();
    private static final Object CLOSED = new Object();
    private static final Object FIRED = new Object();
    private static final CompletionStage<Void> CANCELLED_STAGE = CompletableFuture.completedStage(null);

    private static final VarHandle HEAD = VarHandles.field(MethodHandles.lookup(), "head", CancellationNode.class);
    private static final VarHandle UNREGISTERED_SINCE_SWEEP =
            VarHandles.field(MethodHandles.lookup(), "unregisteredSinceSweep", int.class);
    private static final VarHandle LIVE_AT_LAST_SWEEP =
            VarHandles.field(MethodHandles.lookup(), "liveAtLastSweep", int.class);
    private static final VarHandle SWEEPING = VarHandles.field(MethodHandles.lookup(), "sweeping", int.class);
    private static final VarHandle TIMER = VarHandles.field(MethodHandles.lookup(), "timer", Object.class);
    private static final VarHandle PARENT_LINKS =
            VarHandles.field(MethodHandles.lookup(), "parentLinks", Registration[].class);
    private static final VarHandle SIGNAL = VarHandles.field(MethodHandles.lookup(), "signal", Object.class);

    private final CancellationToken token = new SourceToken(this);

    private CancellationNode head;
    private int unregisteredSinceSweep;
    private int liveAtLastSweep;
    private int sweeping;
    private Object timer;
    private Registration[] parentLinks;
    private Object signal;

    /** Test seam: given a timer between its scheduling and its installation as the source's; tests only. */
    static volatile Consumer<Future<?>> scheduledForTests;

    /** Creates a source that is not cancelled. */
    public CancellationSource() {}

    /**
     * Creates a source that is cancelled when any of the given tokens is.
     *
     * <pre>{@code
     * try (CancellationSource request = CancellationSource.linkedTo(shutdown.token(), client.token())) {
     *     request.cancelAfter(Duration.ofSeconds(30));
     *     serve(request.token());
     * }
     * }</pre>
     *
     * <p>The new source registers a callback on each parent; {@link #close()} removes them, so a
     * long-lived parent does not collect registrations of closed children. If a parent is already
     * cancelled, the returned source is cancelled too. {@link CancellationToken#none()} parents are
     * skipped; with no parent the source behaves like {@code new CancellationSource()}.
     *
     * @param tokens the parents
     * @return a new source, cancelled when any parent is
     * @throws NullPointerException if {@code tokens} or one of its elements is null; no parent is
     *     touched then
     */
    public static CancellationSource linkedTo(CancellationToken... tokens) {
        Objects.requireNonNull(tokens, "tokens");
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] == null) {
                throw new NullPointerException("tokens[" + i + "]");
            }
        }
        CancellationSource child = new CancellationSource();
        Runnable cancelChild = child::cancel;
        Registration[] links = new Registration[tokens.length];
        int linked = 0;
        for (CancellationToken parent : tokens) {
            if (child.isCancellationRequested()) {
                break;
            }
            if (parent.canBeCancelled()) {
                links[linked++] = parent.register(cancelChild);
            }
        }
        if (linked > 0) {
            PARENT_LINKS.setVolatile(child, linked == links.length ? links : Arrays.copyOf(links, linked));
            if (HEAD.getVolatile(child) == CANCELLED) {
                child.detachFromParents();
            }
        }
        return child;
    }

    /** {@return the token of this source; the same object on every call} */
    public CancellationToken token() {
        return token;
    }

    /**
     * Requests cancellation. The first call runs every registered callback on this thread, newest
     * first, each at most once, and returns true; every later call returns false at once.
     *
     * <pre>{@code
     * source.token().register(() -> System.out.println("second"));
     * source.token().register(() -> System.out.println("first"));
     * boolean cancelledNow = source.cancel(); // prints "first", then "second"; true
     * }</pre>
     *
     * <p>A callback that throws does not stop the others. After all of them ran, the first
     * exception is rethrown with the later ones {@linkplain Throwable#addSuppressed suppressed};
     * the source is cancelled either way. Dependent stages of {@link
     * CancellationToken#whenCancelled()} complete before the callbacks run. A linked source
     * cancelled this way also drops its links to its parents and its timer.
     *
     * @return true if this call cancelled the source, false if it already was
     * @throws RuntimeException the first exception a callback threw
     * @throws Error the first error a callback threw
     * @throws java.lang.reflect.UndeclaredThrowableException wrapping the first checked exception a
     *     callback threw, if that came first; the later failures are suppressed on the wrapper, not on
     *     the exception it wraps
     */
    public boolean cancel() {
        CancellationNode top = (CancellationNode) HEAD.getAndSet(this, CANCELLED);
        if (top == CANCELLED) {
            return false;
        }
        dropTimer();
        detachFromParents();
        int[] depth = CancellationNode.enterDispatch();
        try {
            fireSignal();
            CancellationNode.dispatch(top);
        } finally {
            CancellationNode.exitDispatch(depth);
        }
        return true;
    }

    /**
     * Cancels this source after the delay. A later call replaces the earlier timer, whether it asks
     * for a shorter or a longer delay. {@link Duration#ZERO} cancels now, on this thread. Does
     * nothing if the source is already cancelled. A wait this cancels ends as any cancelled wait
     * does, with a {@link java.util.concurrent.CancellationException}; a wait's own time limit
     * ({@code acquireBlocking(Duration)}, the pool's {@code attach(Duration)}) ends with a
     * {@link WaitTimeoutException} instead.
     *
     * <pre>{@code
     * source.cancelAfter(Duration.ofMillis(250));
     * }</pre>
     *
     * <p>One daemon thread keeps the timers of the JVM, and runs no callback: when the delay has
     * passed it hands the cancel to a daemon thread of the library's ({@code refpool-canceller-N},
     * reused, ended when idle), where the callbacks run, and whatever they set off (the waiters a
     * cancelled wait lets through, their continuations). So a callback that blocks holds back no
     * other timer. {@link #cancelAfter(Duration, Executor)} chooses the thread instead.
     *
     * <p>A callback that throws while the timer cancels is reported to the cancelling thread's
     * {@linkplain Thread#getUncaughtExceptionHandler() uncaught exception handler}: it receives what
     * {@link #cancel()} would have thrown, the other failures suppressed on it.
     *
     * @param delay how long to wait before cancelling
     * @throws NullPointerException if {@code delay} is null
     * @throws IllegalArgumentException if {@code delay} is negative
     * @throws IllegalStateException if this source is closed
     */
    public void cancelAfter(Duration delay) {
        arm(delay, null);
    }

    /**
     * {@link #cancelAfter(Duration)} whose cancel, when the delay has passed, the timer thread hands
     * to {@code executor} rather than to the library's own threads: the callbacks, and whatever they
     * set off (the waiters a cancelled wait lets through, their continuations), run there. If
     * {@code executor} throws, the cancel runs on the timer thread that handed it over instead.
     * {@link Duration#ZERO} cancels now, on this thread.
     *
     * <pre>{@code
     * java.util.concurrent.ExecutorService cancels = java.util.concurrent.Executors.newCachedThreadPool();
     * CancellationSource source = new CancellationSource();
     * source.cancelAfter(Duration.ofSeconds(2), cancels);
     * }</pre>
     *
     * @param delay how long to wait before cancelling
     * @param executor where the cancel runs
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code delay} is negative
     * @throws IllegalStateException if this source is closed
     */
    public void cancelAfter(Duration delay, Executor executor) {
        Objects.requireNonNull(executor, "executor");
        arm(delay, executor);
    }

    private void arm(Duration delay, Executor executor) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, was " + delay);
        }
        Object current = TIMER.getAcquire(this);
        if (current == CLOSED) {
            throw closedException();
        }
        if (isCancellationRequested()) {
            return;
        }
        if (delay.isZero()) {
            cancel();
            return;
        }
        Timer timer = new Timer(executor);
        ScheduledFuture<?> scheduled = CancellationTimers.schedule(timer, saturatedNanos(delay));
        Consumer<Future<?>> seam = scheduledForTests;
        if (seam != null) {
            seam.accept(scheduled);
        }
        Object witness;
        while ((witness = TIMER.compareAndExchange(this, current, scheduled)) != current) {
            if (witness == CLOSED) {
                scheduled.cancel(false);
                throw closedException();
            }
            current = witness;
        }
        if (current != null) {
            ((ScheduledFuture<?>) current).cancel(false);
        }
        timer.installed(scheduled); // if it fired already, it fires again on the timer thread
        if (HEAD.getVolatile(this) == CANCELLED) {
            dropTimer();
        }
    }

    /** {@return whether cancellation was requested} */
    public boolean isCancellationRequested() {
        return HEAD.getAcquire(this) == CANCELLED;
    }

    /**
     * Detaches this source from the tokens it was {@linkplain #linkedTo linked} to and cancels its
     * pending {@linkplain #cancelAfter timer}. Does not cancel: callbacks stay registered, and
     * {@link #cancel()} still works. Idempotent; never waits.
     */
    @Override
    public void close() {
        Object pending = TIMER.getAndSet(this, CLOSED);
        if (pending instanceof ScheduledFuture) {
            ((ScheduledFuture<?>) pending).cancel(false);
        }
        detachFromParents();
    }

    @Override
    public String toString() {
        return "CancellationSource[" + (isCancellationRequested() ? "cancelled" : "not cancelled") + "]";
    }

    /** Registers on the token's behalf; see {@link CancellationToken#register}. */
    Registration register(Runnable callback) {
        Objects.requireNonNull(callback, "callback");
        CancellationNode top = (CancellationNode) HEAD.getAcquire(this);
        if (top != CANCELLED) {
            CancellationNode node = new CancellationNode(this, callback);
            do {
                node.linkBeforePublish(CancellationNode.firstLinked(top));
                CancellationNode witness = (CancellationNode) HEAD.compareAndExchange(this, top, node);
                if (witness == top) {
                    return node;
                }
                top = witness;
            } while (top != CANCELLED);
        }
        CancellationNode.runInline(callback);
        return CancellationNode.NO_OP;
    }

    /** Called by a node that moved from REGISTERED to UNREGISTERED; may sweep the list. */
    void onUnregistered() {
        int backlog = (int) UNREGISTERED_SINCE_SWEEP.getAndAdd(this, 1) + 1;
        if (backlog >= MIN_SWEEP_BACKLOG && backlog * 2L >= (int) LIVE_AT_LAST_SWEEP.getOpaque(this)) {
            sweepUnregistered();
        }
    }

    /** Unlinks every unregistered node it finds; returns at once if another thread is sweeping. */
    void sweepUnregistered() {
        if (!SWEEPING.compareAndSet(this, 0, 1)) {
            return;
        }
        try {
            // A hint, not a count: an unregistration racing this reset only moves the next sweep.
            UNREGISTERED_SINCE_SWEEP.setOpaque(this, 0);
            CancellationNode top = (CancellationNode) HEAD.getAcquire(this);
            if (top == CANCELLED) {
                return;
            }
            CancellationNode first = CancellationNode.firstLinked(top);
            if (first != top) {
                CancellationNode witness = (CancellationNode) HEAD.compareAndExchange(this, top, first);
                if (witness == CANCELLED) {
                    return;
                }
                if (witness != top) {
                    // Pushes came in; the newest node may still sit on the run: sweep below it.
                    first = witness;
                }
            }
            int live = 0;
            for (CancellationNode kept = first; kept != null; live++) {
                CancellationNode below = kept.next();
                CancellationNode next = CancellationNode.firstLinked(below);
                if (next != below) {
                    kept.relinkRelease(next);
                }
                kept = next;
            }
            LIVE_AT_LAST_SWEEP.setOpaque(this, live);
        } finally {
            SWEEPING.setRelease(this, 0);
        }
    }

    /** {@return the registrations that may still run: linked and not unregistered}; for tests */
    int registrationCount() {
        int count = 0;
        for (CancellationNode node = linkedTop(); node != null; node = node.next()) {
            if (!node.isUnregistered()) {
                count++;
            }
        }
        return count;
    }

    /** {@return the nodes still linked, unregistered ones included}; for tests */
    int linkedNodeCount() {
        int count = 0;
        for (CancellationNode node = linkedTop(); node != null; node = node.next()) {
            count++;
        }
        return count;
    }

    /** {@return the pending timer, or null}; for tests */
    ScheduledFuture<?> pendingTimer() {
        Object current = TIMER.getAcquire(this);
        return current instanceof ScheduledFuture ? (ScheduledFuture<?>) current : null;
    }

    private CancellationNode linkedTop() {
        CancellationNode top = (CancellationNode) HEAD.getAcquire(this);
        return top == CANCELLED ? null : top;
    }

    /**
     * A timer of {@code cancelAfter}. Its cancel runs only if the timer is still this source's when
     * it comes to run: a {@code close()}, a {@code cancel()} or a later {@code cancelAfter} has taken
     * it out meanwhile, also while the cancel waited in the executor's queue. A timer that fires
     * before the arming thread installed it cannot tell yet, so it only marks that it came early; the
     * arming thread, once the timer is the source's, has it fire again on the timer thread. So the
     * cancel, and an executor's refusal of it, are always the timer thread's, and a {@code
     * cancelAfter} that fails with {@link IllegalStateException} (closed meanwhile) cancels nothing.
     */
    private final class Timer implements Runnable {
        /** Where the cancel runs; {@code null}: on a canceller thread ({@link CancellationTimers#dispatch}). */
        private final Executor executor;
        /** The timer, once the arming thread installed it as the source's; with {@code this} held. */
        private ScheduledFuture<?> installed;
        /** Whether it fired before it was installed; with {@code this} held. */
        private boolean cameEarly;

        Timer(Executor executor) {
            this.executor = executor;
        }

        @Override
        public void run() { // on the timer thread
            ScheduledFuture<?> mine;
            synchronized (this) {
                mine = installed;
                cameEarly = mine == null;
            }
            if (mine != null) {
                fire(mine);
            }
        }

        /** On the arming thread, once {@code scheduled} is the source's timer. */
        void installed(ScheduledFuture<?> scheduled) {
            boolean early;
            synchronized (this) {
                installed = scheduled;
                early = cameEarly;
            }
            if (early) {
                try {
                    CancellationTimers.schedule(() -> fire(scheduled), 0L);
                } catch (Throwable refused) { // no timer thread to fire on: the cancel is not lost
                    fire(scheduled);
                }
            }
        }

        /** The cancel, handed to the executor or a canceller; a refusal runs it here. */
        private void fire(ScheduledFuture<?> mine) {
            try {
                if (executor == null) {
                    CancellationTimers.dispatch(() -> cancelIfInstalled(mine));
                } else {
                    executor.execute(() -> cancelIfInstalled(mine));
                }
            } catch (Throwable refused) {
                cancelIfInstalled(mine);
            }
        }

        /** Cancels if {@code mine} is still the source's timer: not closed, cancelled nor replaced since. */
        private void cancelIfInstalled(ScheduledFuture<?> mine) {
            if (TIMER.compareAndSet(CancellationSource.this, mine, null)) {
                cancelFromTimer();
            }
        }
    }

    private void cancelFromTimer() {
        try {
            cancel();
        } catch (Throwable failure) {
            Thread self = Thread.currentThread();
            self.getUncaughtExceptionHandler().uncaughtException(self, failure);
        }
    }

    private void dropTimer() {
        Object current = TIMER.getVolatile(this);
        if (current instanceof ScheduledFuture && TIMER.compareAndSet(this, current, null)) {
            ((ScheduledFuture<?>) current).cancel(false);
        }
    }

    private void detachFromParents() {
        Registration[] links = (Registration[]) PARENT_LINKS.getAndSet(this, null);
        if (links != null) {
            for (Registration link : links) {
                link.unregister();
            }
        }
    }

    private void fireSignal() {
        Object current = SIGNAL.getAndSet(this, FIRED);
        if (current instanceof Signal) {
            ((Signal) current).future.complete(null);
        }
    }

    private CompletionStage<Void> whenCancelled() {
        Object current = SIGNAL.getAcquire(this);
        if (current == FIRED || isCancellationRequested()) {
            return CANCELLED_STAGE;
        }
        if (current != null) {
            return ((Signal) current).stage;
        }
        Signal created = new Signal();
        Object witness = SIGNAL.compareAndExchange(this, null, created);
        if (witness == null) {
            return created.stage;
        }
        return witness == FIRED ? CANCELLED_STAGE : ((Signal) witness).stage;
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("cancellation source is closed; cancelAfter needs an open source");
    }

    private static long saturatedNanos(Duration delay) {
        try {
            return delay.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** The future completed by cancel(), and the read-only view handed out. */
    private static final class Signal {
        final CompletableFuture<Void> future = new CompletableFuture<>();
        final CompletionStage<Void> stage = future.minimalCompletionStage();
    }

    /** The token of a source: a view that forwards to it. */
    private static final class SourceToken extends CancellationToken {
        private final CancellationSource source;

        SourceToken(CancellationSource source) {
            this.source = source;
        }

        @Override
        public boolean isCancellationRequested() {
            return source.isCancellationRequested();
        }

        @Override
        public boolean canBeCancelled() {
            return true;
        }

        @Override
        public Registration register(Runnable callback) {
            return source.register(callback);
        }

        @Override
        public CompletionStage<Void> whenCancelled() {
            return source.whenCancelled();
        }

        @Override
        public void throwIfCancellationRequested() {
            if (source.isCancellationRequested()) {
                throw new CancellationException("cancellation was requested on this token");
            }
        }

        @Override
        public String toString() {
            return "CancellationToken[" + (source.isCancellationRequested() ? "cancelled" : "not cancelled") + "]";
        }
    }
}
