package io.refpool.sync;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the cancellation protocol: register (with the list's prune), unregister and close
 * (of a thread's own registrations and of two registrations every thread shares), the sweeper,
 * cancel and the cancellation queries, in the interleavings Lincheck explores.
 *
 * <p>Results that are linearizable are compared with {@link SequentialCancellation}: which
 * {@code cancel()} wins, whether a registration ran inline, and the queries. Whether a callback
 * runs is not linearizable against an atomic {@code cancel()}: callbacks run one by one, and an
 * unregister between two of them still suppresses the later one. So the per-registration
 * guarantees are checked after every execution, in {@link #validate()}:
 *
 * <ul>
 *   <li>every callback ran at most once, and finished;
 *   <li>a callback ran exactly when no {@code unregister()}/{@code close()} removed it and the
 *       source was cancelled (or it ran inline);
 *   <li>at most one {@code unregister()} of a registration returned true, and only if the callback
 *       never ran; one that returned false saw it run or removed;
 *   <li>callbacks ran newest first: a thread's own registrations in reverse order, and every
 *       registration made during the run before the two shared ones, which were made first;
 *   <li>{@code close()} never returned while its callback was running;
 *   <li>without cancellation, the list holds exactly the live registrations, so neither the
 *       prune nor the sweeper unlinked a live node.
 * </ul>
 */
public class CancellationLincheckTest {
    private static final int THREADS = 3;
    /** Lincheck numbers the parallel threads from 0; the init and post parts get ids of their own. */
    private static final int THREAD_IDS = THREADS + 2;

    private static final int INIT_THREAD = THREADS;
    private static final int POST_THREAD = THREADS + 1;
    private static final int PER_THREAD = 16;
    private static final int SHARED = 2;
    /** The shared registrations use the ids after every thread's own. */
    private static final int FIRST_SHARED_ID = THREAD_IDS * PER_THREAD;

    private static final int PENDING = 0;
    private static final int INLINE = 1;
    private static final int REMOVED = 2;
    private static final int NOT_REMOVED = 3;
    /** A shared registration this thread closed; whether that close or another call removed it is unknown. */
    private static final int CLOSED = 4;

    private final CancellationSource source = new CancellationSource();
    private final AtomicIntegerArray started = new AtomicIntegerArray(FIRST_SHARED_ID + SHARED);
    private final AtomicIntegerArray finished = new AtomicIntegerArray(FIRST_SHARED_ID + SHARED);
    private final AtomicIntegerArray runOrder = new AtomicIntegerArray(FIRST_SHARED_ID + SHARED);
    private final AtomicReferenceArray<Thread> ranOn = new AtomicReferenceArray<>(FIRST_SHARED_ID + SHARED);
    private final AtomicInteger clock = new AtomicInteger();
    private final Registration[] shared = new Registration[SHARED];

    /* Each row is written only by its own thread during an execution and read by validate() after. */
    private final Registration[][] registrations = new Registration[THREAD_IDS][PER_THREAD];
    private final int[][] status = new int[THREAD_IDS][PER_THREAD];
    private final int[][] sharedStatus = new int[THREAD_IDS][SHARED];
    private final int[] registered = new int[THREAD_IDS];
    private final boolean[] closeReturnedEarly = new boolean[THREAD_IDS];

    public CancellationLincheckTest() {
        for (int slot = 0; slot < SHARED; slot++) {
            shared[slot] = source.token().register(callback(FIRST_SHARED_ID + slot));
        }
    }

    @Operation
    public boolean register(@Param(gen = ThreadIdGen.class) int thread) {
        int k = registered[thread]++;
        int id = thread * PER_THREAD + k;
        registrations[thread][k] = source.token().register(callback(id));
        boolean inline = ranOn.get(id) == Thread.currentThread();
        status[thread][k] = inline ? INLINE : PENDING;
        return inline;
    }

    @Operation
    public void unregisterNewest(@Param(gen = ThreadIdGen.class) int thread) {
        for (int k = registered[thread] - 1; k >= 0; k--) {
            if (status[thread][k] == PENDING) {
                status[thread][k] = registrations[thread][k].unregister() ? REMOVED : NOT_REMOVED;
                return;
            }
        }
    }

    @Operation
    public void unregisterOldest(@Param(gen = ThreadIdGen.class) int thread) {
        for (int k = 0; k < registered[thread]; k++) {
            if (status[thread][k] == PENDING) {
                status[thread][k] = registrations[thread][k].unregister() ? REMOVED : NOT_REMOVED;
                return;
            }
        }
    }

    @Operation
    public void closeNewest(@Param(gen = ThreadIdGen.class) int thread) {
        for (int k = registered[thread] - 1; k >= 0; k--) {
            if (status[thread][k] == PENDING) {
                status[thread][k] = closeAndCheck(registrations[thread][k], thread, thread * PER_THREAD + k);
                return;
            }
        }
    }

    @Operation
    public void unregisterShared(
            @Param(gen = ThreadIdGen.class) int thread, @Param(gen = IntGen.class, conf = "0:1") int slot) {
        if (sharedStatus[thread][slot] == PENDING) {
            sharedStatus[thread][slot] = shared[slot].unregister() ? REMOVED : NOT_REMOVED;
        }
    }

    @Operation
    public void closeShared(
            @Param(gen = ThreadIdGen.class) int thread, @Param(gen = IntGen.class, conf = "0:1") int slot) {
        if (sharedStatus[thread][slot] == PENDING) {
            closeAndCheck(shared[slot], thread, FIRST_SHARED_ID + slot);
            sharedStatus[thread][slot] = CLOSED;
        }
    }

    @Operation
    public void sweep() {
        source.sweepUnregistered();
    }

    @Operation
    public boolean cancel() {
        return source.cancel();
    }

    @Operation
    public boolean isCancellationRequested() {
        return source.token().isCancellationRequested();
    }

    @Operation
    public boolean whenCancelledIsDone() {
        return source.token().whenCancelled().toCompletableFuture().isDone();
    }

    @Validate
    public void validate() {
        boolean cancelled = source.isCancellationRequested();
        int live = 0;
        int lastDispatchedDuringRun = 0;
        for (int thread = 0; thread < THREAD_IDS; thread++) {
            check(!closeReturnedEarly[thread], "close() returned while its callback ran, thread " + thread);
            int newerRunOrder = 0;
            for (int k = registered[thread] - 1; k >= 0; k--) {
                int id = thread * PER_THREAD + k;
                int runs = checkRuns(id);
                boolean shouldRun;
                switch (status[thread][k]) {
                    case INLINE:
                    case NOT_REMOVED:
                        shouldRun = true;
                        break;
                    case REMOVED:
                        shouldRun = false;
                        break;
                    default:
                        shouldRun = cancelled;
                        live++;
                }
                check(runs == (shouldRun ? 1 : 0), "callback " + id + " status " + status[thread][k] + " ran " + runs);
                if (runs == 1 && status[thread][k] != INLINE) {
                    check(runOrder.get(id) > newerRunOrder, "callbacks of thread " + thread + " ran out of order");
                    newerRunOrder = runOrder.get(id);
                    lastDispatchedDuringRun = Math.max(lastDispatchedDuringRun, newerRunOrder);
                }
            }
        }
        int sharedRunOrder = 0;
        for (int slot = SHARED - 1; slot >= 0; slot--) {
            int id = FIRST_SHARED_ID + slot;
            int runs = checkRuns(id);
            int removed = 0;
            int notRemoved = 0;
            int closed = 0;
            for (int thread = 0; thread < THREAD_IDS; thread++) {
                removed += sharedStatus[thread][slot] == REMOVED ? 1 : 0;
                notRemoved += sharedStatus[thread][slot] == NOT_REMOVED ? 1 : 0;
                closed += sharedStatus[thread][slot] == CLOSED ? 1 : 0;
            }
            check(removed <= 1, "shared " + slot + " removed " + removed + " times");
            check(runs == 0 || removed == 0, "shared " + slot + " ran after an unregister returned true");
            check(cancelled || runs == 0, "shared " + slot + " ran without cancellation");
            check(!cancelled || runs == 1 || removed == 1 || closed > 0, "shared " + slot + " never ran");
            check(notRemoved == 0 || runs == 1 || removed == 1 || closed > 0, "shared " + slot + " lost");
            live += removed == 0 && closed == 0 && runs == 0 ? 1 : 0;
            if (runs == 1) {
                check(runOrder.get(id) > sharedRunOrder, "shared callbacks ran out of order");
                check(runOrder.get(id) > lastDispatchedDuringRun, "a shared callback ran before a newer one");
                sharedRunOrder = runOrder.get(id);
            }
        }
        if (!cancelled) {
            check(
                    source.registrationCount() == live,
                    "list holds " + source.registrationCount() + " live nodes, expected " + live);
        }
    }

    @Test
    void modelCheck() {
        ModelCheckingOptions options = new ModelCheckingOptions()
                .threads(THREADS)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1)
                .iterations(8)
                .invocationsPerIteration(250)
                .sequentialSpecification(SequentialCancellation.class);
        // Scenarios that put the riskiest operations side by side, explored on top of random ones.
        options.addCustomScenario(scenario(
                List.of(),
                List.of(
                        List.of(actor("cancel")),
                        List.of(actor("unregisterShared", 1, 0), actor("unregisterShared", 1, 1)),
                        List.of(actor("register", 2), actor("closeShared", 2, 1)))));
        options.addCustomScenario(scenario(
                List.of(actor("register", INIT_THREAD), actor("register", INIT_THREAD)),
                List.of(
                        List.of(actor("register", 0), actor("unregisterOldest", 0)),
                        List.of(actor("unregisterShared", 1, 1), actor("sweep")),
                        List.of(actor("register", 2), actor("unregisterNewest", 2), actor("cancel")))));
        options.addCustomScenario(
                scenario(List.of(), List.of(List.of(actor("cancel")), List.of(actor("closeShared", 1, 1)))));
        options.check(getClass());
    }

    private Runnable callback(int id) {
        return () -> {
            started.incrementAndGet(id);
            runOrder.set(id, clock.incrementAndGet());
            ranOn.set(id, Thread.currentThread());
            finished.incrementAndGet(id);
        };
    }

    /** {@return REMOVED or NOT_REMOVED, exact for a registration no other thread touches} */
    private int closeAndCheck(Registration registration, int thread, int id) {
        registration.close();
        int begun = started.get(id);
        if (begun != finished.get(id)) {
            closeReturnedEarly[thread] = true;
        }
        return begun == 0 ? REMOVED : NOT_REMOVED;
    }

    private int checkRuns(int id) {
        int runs = finished.get(id);
        check(started.get(id) == runs, "callback " + id + " did not finish");
        check(runs <= 1, "callback " + id + " ran " + runs + " times");
        return runs;
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }

    private static ExecutionScenario scenario(List<Actor> init, List<List<Actor>> parallel) {
        return new ExecutionScenario(
                new ArrayList<>(init), new ArrayList<>(parallel), List.of(actor("isCancellationRequested")), null);
    }

    private static Actor actor(String operation, Object... arguments) {
        for (Method method : CancellationLincheckTest.class.getMethods()) {
            if (method.getName().equals(operation) && method.getParameterCount() == arguments.length) {
                return new Actor(method, Arrays.asList(arguments));
            }
        }
        throw new IllegalArgumentException("no operation " + operation + "/" + arguments.length);
    }

    /** The linearizable part of the contract, executed one operation at a time. */
    public static class SequentialCancellation {
        private boolean cancelled;

        public SequentialCancellation() {}

        public boolean register(int thread) {
            return cancelled;
        }

        public void unregisterNewest(int thread) {}

        public void unregisterOldest(int thread) {}

        public void closeNewest(int thread) {}

        public void unregisterShared(int thread, int slot) {}

        public void closeShared(int thread, int slot) {}

        public void sweep() {}

        public boolean cancel() {
            boolean first = !cancelled;
            cancelled = true;
            return first;
        }

        public boolean isCancellationRequested() {
            return cancelled;
        }

        public boolean whenCancelledIsDone() {
            return cancelled;
        }
    }
}
