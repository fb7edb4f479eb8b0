package io.refpool.sync;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.internal.QueueHooks;
import io.refpool.sync.internal.QueueHooks.Point;
import io.refpool.testkit.TestKit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A queued blocking waiter spins, then publishes that it parks, reads its phase again and parks;
 * a granter unparks only a waiter that published the flag, and a batch of readers is woken one by
 * one, each by the one before. Each test pauses the waiter at a point of that sequence while the
 * grant lands, and fails by hanging (bounded by the test kit) if a wake-up is lost.
 */
class ParkedFlagWakeupTest {
    enum Where {
        /** The grant lands before the waiter publishes the flag: the granter unparks nobody. */
        BEFORE_PARKED_FLAG,
        /**
         * The grant lands after the waiter published the flag and read its phase, before it parks:
         * the granter sees the flag and unparks, and the park returns at once.
         */
        BEFORE_PARK
    }

    /**
     * Holds one thread at one point by spinning, not parking: a pause that parked (a latch) would
     * swallow the very unpark the test is about, which a real waiter never does between its flag
     * and its park.
     */
    static final class SpinningPause implements QueueHooks {
        private final Point point;
        private final Thread thread;
        private final java.util.concurrent.atomic.AtomicBoolean arrived =
                new java.util.concurrent.atomic.AtomicBoolean();
        private volatile boolean proceed;
        private boolean used;

        SpinningPause(Point point, Thread thread) {
            this.point = point;
            this.thread = thread;
        }

        @Override
        public void at(Point p) {
            if (p != point || Thread.currentThread() != thread || used) {
                return;
            }
            used = true;
            arrived.set(true);
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (!proceed) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("paused at " + point + " and never released");
                }
                Thread.onSpinWait();
            }
        }

        void awaitArrival() {
            TestKit.eventually().untilTrue(arrived);
        }

        void proceed() {
            proceed = true;
        }
    }

    private static Point point(Where where) {
        return where == Where.BEFORE_PARKED_FLAG ? Point.BEFORE_PARKED_FLAG : Point.BEFORE_PARK;
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void aMutexGrantThatLandsAroundTheParkedFlagIsNeverLost(Where where) throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        Guard held = mutex.acquireBlocking();
        AtomicReference<Guard> granted = new AtomicReference<>();
        TestKit.Forked<Void> waiter = TestKit.unstartedRun("waiter", () -> granted.set(mutex.acquireBlocking()));
        SpinningPause hooks = new SpinningPause(point(where), waiter.thread);
        SyncTesting.queueOf(mutex).setHooks(hooks);
        waiter.start();
        hooks.awaitArrival(); // queued, done spinning, the flag not yet (or just) published
        held.close(); // the grant lands here
        hooks.proceed();
        waiter.join(); // returns only if the waiter saw its grant or was unparked
        SyncTesting.queueOf(mutex).setHooks(null);
        assertNotNull(granted.get());
        granted.get().close();
        assertTrue(mutex.tryLock(), "the lock was handed over and given back");
        mutex.unlock();
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void aCancellationThatLandsAroundTheParkedFlagIsNeverLost(Where where) throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        Guard held = mutex.acquireBlocking();
        CancellationSource source = new CancellationSource();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        TestKit.Forked<Void> waiter = TestKit.unstartedRun("waiter", () -> {
            try {
                mutex.acquireBlocking(source.token()).close();
            } catch (java.util.concurrent.CancellationException expected) {
                failure.set(expected);
            }
        });
        SpinningPause hooks = new SpinningPause(point(where), waiter.thread);
        SyncTesting.queueOf(mutex).setHooks(hooks);
        waiter.start();
        hooks.awaitArrival();
        source.cancel(); // the cancel lands here
        hooks.proceed();
        waiter.join();
        SyncTesting.queueOf(mutex).setHooks(null);
        assertNotNull(failure.get(), "the waiter saw its cancellation");
        held.close();
        assertTrue(mutex.tryLock());
        mutex.unlock();
    }

    /**
     * A writer's release admits a batch of parked readers; each reader, once running, wakes the
     * next. Every reader gets in, also when one of them is held between being granted and passing
     * its wake-up on (the others then wait for it: the chain is ordered, not lost).
     */
    @Test
    void aBatchOfParkedReadersIsWokenOneByOneAndNobodyIsLeftParked() throws Exception {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        Guard writer = lock.acquireBlocking();
        int readers = 4;
        CountDownLatch in = new CountDownLatch(readers);
        List<TestKit.Forked<Void>> threads = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            threads.add(TestKit.forkRun("reader-" + i, () -> {
                try (Guard shared = lock.acquireSharedBlocking()) {
                    in.countDown();
                }
            }));
        }
        for (TestKit.Forked<Void> reader : threads) {
            TestKit.awaitParked(reader.thread); // spun, published the flag, parked
        }
        assertEquals(readers, lock.queueLength());
        writer.close(); // one unpark: the first reader; each wakes the next
        assertTrue(in.await(BOUND.toSeconds(), TimeUnit.SECONDS), "every reader got in");
        for (TestKit.Forked<Void> reader : threads) {
            reader.join();
        }
        assertTrue(lock.tryLock(), "every reader left");
        lock.unlock();
    }
}
