package io.refpool.sync.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A timed waiter at the head of the queue spins only until its deadline, and a spin its deadline
 * ends leaves the adaptive budget alone: the deadline says nothing about how long holds last. A
 * spin that ran its whole budget to a park would have lowered it by an eighth.
 */
class TimedSpinTest {
    @Test
    void aSpinEndedByTheDeadlineKeepsTheBudget() throws Exception {
        assumeTrue(Runtime.getRuntime().availableProcessors() > 1, "nobody spins on a single core");
        MutexSync mutex = new MutexSync();
        assertTrue(mutex.tryLock(), "the fresh mutex is free");
        int budget = mutex.spinBudget();

        // the lock stays held: the waiter joins the empty queue, spins, and times out
        assertFalse(mutex.tryAcquireGuard(MutexSync.ONE, Duration.ofNanos(2_000), "the mutex")
                .isPresent());

        assertEquals(budget, mutex.spinBudget(), "the budget after a spin its deadline ended");
        assertEquals(0, mutex.queueLength(), "the timed-out waiter left the queue");
        mutex.unlock();
    }
}
