package io.refpool.bench;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Control;

/**
 * The physical floor: what the cheapest synchronization steps cost on this machine, so every other
 * suite's numbers can be read against it.
 *
 * <pre>{@code
 * java -jar pool-bench/target/pool-bench.jar floor
 * }</pre>
 *
 * <ul>
 *   <li>{@code acquireLoad}: one acquire load of a word every thread shares and nobody writes — the
 *       cost of refpool's attach fast path when nothing is pending. It is {@link Scales}: reading a
 *       shared, unwritten cache line scales with cores, so its line is the ideal every scaling
 *       chart is measured against.
 *   <li>{@code casUncontended}: one successful compare-and-set on a word only this thread touches
 *       — the cost of an uncontended lock's fast path.
 *   <li>{@code lockUnlockUncontended}: {@link ReentrantLock#lock()} and {@link
 *       ReentrantLock#unlock()} on a lock only this thread uses — the JDK baseline every mutex peer
 *       is compared with.
 *   <li>{@code threadLocalGet}: one {@link ThreadLocal#get()} of a value the thread already has —
 *       what any per-thread attach state costs to find, before any check. It is {@link Scales}.
 *   <li>{@code pingPong}: two threads pass one word back and forth, each waiting (spinning) for
 *       the other's compare-and-set before its own; time per pass of each thread. A pass is a round
 *       trip of the word's cache line between the two cores, twice over: the least a handoff of a
 *       lock between two running threads can cost, since the lock's word, at least, must travel.
 * </ul>
 *
 * <p>It has no {@code impl} parameter: each method is a single-implementation row. The annotations
 * below only matter when JMH runs the class directly; the runner sets forks and iterations from its
 * profile.
 */
@Fork(2)
public class FloorBenchmark extends AverageTimeDefaults {

    /** A word all benchmark threads read; it is written once, before measurement. */
    @State(Scope.Benchmark)
    public static class SharedWord {
        private static final VarHandle WORD;

        static {
            try {
                WORD = MethodHandles.lookup().findVarHandle(SharedWord.class, "word", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // read through WORD
        private int word = 1;

        int loadAcquire() {
            return (int) WORD.getAcquire(this);
        }
    }

    /** A word and a lock private to one benchmark thread, so neither is ever contended. */
    @State(Scope.Thread)
    public static class PrivateWord {
        private static final VarHandle WORD;

        static {
            try {
                WORD = MethodHandles.lookup().findVarHandle(PrivateWord.class, "word", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private int word;
        private final ReentrantLock lock = new ReentrantLock();

        /** Only this thread writes {@code word}, so a plain read yields the expected value. */
        boolean casIncrement() {
            int expected = word;
            return WORD.compareAndSet(this, expected, expected + 1);
        }

        int lockedIncrement() {
            lock.lock();
            try {
                return ++word;
            } finally {
                lock.unlock();
            }
        }
    }

    /** The word two threads of a group pass back and forth. */
    @State(Scope.Group)
    public static class Ball {
        final AtomicBoolean served = new AtomicBoolean();

        /**
         * Waits for the ball to be at {@code from}, then sends it to the other side; gives up when
         * the iteration ends, so the partner's last pass never waits forever.
         */
        void pass(boolean from, Control control) {
            while (!served.compareAndSet(from, !from)) {
                if (control.stopMeasurement) {
                    return;
                }
                Thread.onSpinWait();
            }
        }
    }

    /** A thread-local every benchmark thread reads its own value of. */
    @State(Scope.Benchmark)
    public static class PerThreadValue {
        final ThreadLocal<Object> value = ThreadLocal.withInitial(Object::new);
    }

    @Benchmark
    @Scales
    public Object threadLocalGet(PerThreadValue perThread) {
        return perThread.value.get();
    }

    @Benchmark
    @Scales
    public int acquireLoad(SharedWord shared) {
        return shared.loadAcquire();
    }

    @Benchmark
    public boolean casUncontended(PrivateWord own) {
        return own.casIncrement();
    }

    @Benchmark
    public int lockUnlockUncontended(PrivateWord own) {
        return own.lockedIncrement();
    }

    @Benchmark
    @Group("pingPong")
    @GroupThreads(1)
    public void ping(Ball ball, Control control) {
        ball.pass(false, control);
    }

    @Benchmark
    @Group("pingPong")
    @GroupThreads(1)
    public void pong(Ball ball, Control control) {
        ball.pass(true, control);
    }
}
