package io.refpool.testkit;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Test hooks at named points, for every seam of the library: each passage of a point is counted,
 * and a {@link #pause} holds the first passages of a point (by one thread, or by any) until the test
 * lets them go, so a test can open a race window deterministically: pause a point, wait for
 * {@link Pause#awaitArrival()}, act, then {@link Pause#proceed()}. A point can hold several threads,
 * each with a pause of its own. A seam's hook interface is implemented by extending this class with
 * that seam's enum of points.
 *
 * @param <P> the seam's points
 */
public class PointPauses<P extends Enum<P>> {
    private final EnumMap<P, LongAdder> counts;
    private final Map<P, List<Pause>> pauses = new ConcurrentHashMap<>();

    protected PointPauses(Class<P> points) {
        counts = new EnumMap<>(points);
        for (P point : points.getEnumConstants()) {
            counts.put(point, new LongAdder());
        }
    }

    /** One point's pause: holds the first {@code times} passages that match it. */
    public static final class Pause {
        private final Object point;
        private final Thread thread;
        private final AtomicInteger remaining;
        private final CountDownLatch arrived;
        private final CountDownLatch proceed = new CountDownLatch(1);
        /** Set by a held thread that stopped waiting: its failure may have been swallowed where it ran. */
        private volatile boolean gaveUp;

        private Pause(Object point, Thread thread, int times) {
            this.point = point;
            this.thread = thread;
            this.remaining = new AtomicInteger(times);
            this.arrived = new CountDownLatch(times);
        }

        /** Blocks until every thread this pause holds has reached the point. */
        public void awaitArrival() throws InterruptedException {
            if (!arrived.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("no thread reached " + point);
            }
        }

        /**
         * Lets the held threads go on; fails if one stopped waiting already (its own failure may have
         * been caught by whoever called the point, a cache's listener say, so it is reported here).
         */
        public void proceed() {
            proceed.countDown();
            if (gaveUp) {
                throw new AssertionError("a thread held at " + point + " stopped waiting before proceed()");
            }
        }

        private boolean takes(Thread current) {
            return (thread == null || thread == current) && remaining.getAndDecrement() > 0;
        }

        private void hold() {
            arrived.countDown();
            try {
                if (!proceed.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS)) {
                    gaveUp = true;
                    throw new AssertionError("held at " + point + " and never let go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@return the pause of the first passage of {@code point} by {@code thread} (any thread if null)} */
    public Pause pause(P point, Thread thread) {
        return pause(point, thread, 1);
    }

    /** {@return the pause of the first {@code times} passages of {@code point} by {@code thread} (or any)} */
    public Pause pause(P point, Thread thread, int times) {
        Pause pause = new Pause(point, thread, times);
        pauses.computeIfAbsent(point, p -> new CopyOnWriteArrayList<>()).add(pause);
        return pause;
    }

    /** Called by the seam at {@code point}: counts the passage, and holds it if a pause takes it. */
    public void at(P point) {
        counts.get(point).increment();
        List<Pause> atPoint = pauses.get(point);
        if (atPoint == null) {
            return;
        }
        Thread current = Thread.currentThread();
        for (Pause pause : atPoint) {
            if (pause.takes(current)) {
                pause.hold();
                return;
            }
        }
    }

    /** {@return how many times a thread passed {@code point}} */
    public long count(P point) {
        return counts.get(point).sum();
    }
}
