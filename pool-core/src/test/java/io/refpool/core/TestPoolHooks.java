package io.refpool.core;

import io.refpool.core.internal.PoolHooks;
import io.refpool.testkit.TestKit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link PoolHooks} that hold one thread at a named point until the test lets it go, so a test can
 * open a race window of the pool deterministically: {@link #pause} a point, wait for
 * {@link Pause#awaitArrival()}, act, then {@link Pause#proceed()}. Each pause holds the first passage
 * only (by a given thread, or by any); a point can hold several threads, each with a pause of its own.
 */
final class TestPoolHooks implements PoolHooks {
    private final Map<Point, List<Pause>> pauses = new ConcurrentHashMap<>();

    /** One point's pause. */
    static final class Pause {
        private final Point point;
        private final Thread thread;
        private final AtomicBoolean taken = new AtomicBoolean();
        private final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch proceed = new CountDownLatch(1);

        private Pause(Point point, Thread thread) {
            this.point = point;
            this.thread = thread;
        }

        /** Blocks until a thread is held at the point. */
        void awaitArrival() throws InterruptedException {
            if (!arrived.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("no thread reached " + point);
            }
        }

        /** Lets the held thread go on. */
        void proceed() {
            proceed.countDown();
        }

        private void hold() {
            arrived.countDown();
            try {
                if (!proceed.await(TestKit.BOUND.toSeconds(), TimeUnit.SECONDS)) {
                    throw new AssertionError("held at " + point + " and never let go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@return the pause of the first passage of {@code point} by {@code thread} (any thread if null)} */
    Pause pause(Point point, Thread thread) {
        Pause pause = new Pause(point, thread);
        pauses.computeIfAbsent(point, p -> new CopyOnWriteArrayList<>()).add(pause);
        return pause;
    }

    @Override
    public void at(Point point) {
        List<Pause> atPoint = pauses.get(point);
        if (atPoint == null) {
            return;
        }
        for (Pause pause : atPoint) {
            if ((pause.thread == null || pause.thread == Thread.currentThread())
                    && pause.taken.compareAndSet(false, true)) {
                pause.hold();
                return;
            }
        }
    }
}
