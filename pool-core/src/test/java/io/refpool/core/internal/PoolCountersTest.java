package io.refpool.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The idle-hit and reached-zero counts: a thread's first events go to the striped counters, the
 * rest to its own state, and every count is summed exactly once, before and after its thread ends.
 */
class PoolCountersTest {
    private static final int THRESHOLD = PoolCounters.SHARED_BEFORE_OWN;

    /** Counts {@code n} revives and zeroes as one thread's requests do, on the calling thread. */
    private static AttachState count(PoolCounters counters, int n) {
        AttachState s = new AttachState(Thread.currentThread());
        for (int i = 0; i < n; i++) {
            counters.idleHit(s);
            counters.reachedZero(s);
        }
        return s;
    }

    @Test
    void aThreadCountsItsOwnAfterTheThresholdAndEveryEventIsSummedOnce() {
        PoolCounters counters = new PoolCounters();
        AttachState s = count(counters, THRESHOLD / 2 - 1); // two events per round: one short of it
        assertFalse(s.countsOwn, "below the threshold: shared only");
        assertEquals(0, counters.countingThreads());
        counters.idleHit(s);
        counters.reachedZero(s); // the threshold: it joins
        assertTrue(s.countsOwn);
        assertEquals(1, counters.countingThreads());
        for (int i = 0; i < 1000; i++) {
            counters.idleHit(s);
            counters.reachedZero(s);
        }
        assertEquals(THRESHOLD / 2 + 1000, counters.idleHits());
        assertEquals(THRESHOLD / 2 + 1000, counters.zeroes());
        assertEquals(1000, s.ownIdleHits(), "counted in the state after it joined");
        assertEquals(0, counters.idleNow());
    }

    @Test
    void endedThreadsAreFoldedInWithTheirCountsAndTheListStaysBounded() throws Exception {
        PoolCounters counters = new PoolCounters();
        int threads = 20 * THRESHOLD;
        int perThread = 3 * THRESHOLD;
        for (int t = 0; t < threads; t++) { // one after another: each ends before the next joins
            Thread thread = new Thread(() -> count(counters, perThread));
            thread.start();
            thread.join();
            assertTrue(
                    counters.countingThreads() <= 2 * THRESHOLD + 1,
                    () -> "the list holds " + counters.countingThreads() + " states of threads that ended");
            assertEquals((long) (t + 1) * perThread, counters.idleHits(), "each thread's hits, once");
        }
        assertEquals((long) threads * perThread, counters.zeroes());
    }

    /**
     * A live thread whose thread-locals are cleared between tasks (a common-pool worker) counts in
     * a new state each time: each replaces the one before, its counts kept, so the list stays one
     * state per thread.
     */
    @Test
    void aLiveThreadThatJoinsAgainWithANewStateReplacesItsOldOne() {
        PoolCounters counters = new PoolCounters();
        int tasks = 1000;
        int perTask = THRESHOLD;
        for (int t = 0; t < tasks; t++) {
            count(counters, perTask); // a new state each time, on this one live thread
            assertEquals(1, counters.countingThreads(), "one state for the one thread");
        }
        assertEquals((long) tasks * perTask, counters.idleHits(), "every task's hits, once");
        assertEquals((long) tasks * perTask, counters.zeroes());
    }

    @Test
    void aReaderSeesTheSumsOnlyGrowWhileThreadsCountAndEnd() throws Exception {
        PoolCounters counters = new PoolCounters();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> fell = new AtomicReference<>();
        CountDownLatch reading = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            long last = 0;
            reading.countDown();
            while (!done.get()) {
                long now = counters.idleHits();
                if (now < last) {
                    fell.compareAndSet(null, "idle hits fell from " + last + " to " + now);
                }
                last = now;
            }
        });
        reader.start();
        assertTrue(reading.await(10, TimeUnit.SECONDS));
        List<Thread> writers = new ArrayList<>();
        int rounds = 40;
        int perThread = 4 * THRESHOLD;
        for (int r = 0; r < rounds; r++) { // two at a time, so sweeps run while others count
            for (int w = 0; w < 2; w++) {
                Thread writer = new Thread(() -> count(counters, perThread));
                writers.add(writer);
                writer.start();
            }
            for (Thread writer : writers) {
                writer.join();
            }
            writers.clear();
        }
        done.set(true);
        reader.join();
        assertEquals(null, fell.get());
        assertEquals((long) rounds * 2 * perThread, counters.idleHits());
        assertEquals((long) rounds * 2 * perThread, counters.zeroes());
    }
}
