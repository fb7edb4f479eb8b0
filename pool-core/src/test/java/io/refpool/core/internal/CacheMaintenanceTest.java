package io.refpool.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Who runs the idle cache's maintenance ({@link CacheMaintenance}), each step forced: a request that
 * finds a runner hands its round over and returns at once, the runner runs that round before it
 * returns, and a runner past its handoff rounds takes no more, so a request in its last round runs
 * its own.
 */
class CacheMaintenanceTest {
    /** A round that holds the runner's thread until the test lets it go, and counts by thread. */
    private static final class HeldRounds implements Runnable {
        final List<Thread> ranOn = new CopyOnWriteArrayList<>();
        final Semaphore arrived = new Semaphore(0);
        final Semaphore go = new Semaphore(0);
        volatile Thread held;

        @Override
        public void run() {
            ranOn.add(Thread.currentThread());
            if (Thread.currentThread() == held) {
                arrived.release();
                go.acquireUninterruptibly();
            }
        }

        void awaitArrival() throws InterruptedException {
            if (!arrived.tryAcquire(TestKit.BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("the runner did not start its round");
            }
        }

        long on(Thread thread) {
            return ranOn.stream().filter(t -> t == thread).count();
        }
    }

    /** {@return a thread whose request made it the runner, held in its first round} */
    private static TestKit.Forked<Void> runnerHeldInItsFirstRound(CacheMaintenance maintenance, HeldRounds rounds)
            throws InterruptedException {
        TestKit.Forked<Void> runner = TestKit.unstartedRun("runner", maintenance::request);
        rounds.held = runner.thread;
        runner.start();
        rounds.awaitArrival();
        return runner;
    }

    @Test
    void aRequestThatFindsARunnerHandsItsRoundOverAndTheRunnerRunsItBeforeReturning() throws Exception {
        HeldRounds rounds = new HeldRounds();
        CacheMaintenance maintenance = new CacheMaintenance(rounds);
        TestKit.Forked<Void> runner = runnerHeldInItsFirstRound(maintenance, rounds);

        maintenance.request(); // returns while the runner is held: handed over
        assertEquals(0, rounds.on(Thread.currentThread()), "the request ran no round of its own");
        assertEquals(CacheMaintenance.AGAIN, maintenance.state());

        rounds.go.release();
        rounds.awaitArrival(); // the round it owes, started after the request
        assertEquals(2, rounds.on(runner.thread));
        rounds.go.release();
        runner.join();
        assertEquals(CacheMaintenance.IDLE, maintenance.state());
    }

    @Test
    void theCachesOwnTaskIsTheRunnerWhenNoneIsRunning() throws Exception {
        HeldRounds rounds = new HeldRounds();
        CacheMaintenance maintenance = new CacheMaintenance(rounds);
        HeldRounds task = new HeldRounds();
        TestKit.Forked<Void> writer =
                TestKit.unstartedRun("writer", () -> CacheTasks.executeInPut(maintenance, new CacheTasks.Task(task)));
        task.held = writer.thread;
        rounds.held = writer.thread;
        writer.start();
        task.awaitArrival(); // the cache's task holds its lock

        maintenance.request(); // a put over the bound meanwhile
        assertEquals(0, rounds.on(Thread.currentThread()), "the put did not wait for the task's lock");

        task.go.release();
        rounds.awaitArrival(); // the writer runs the put's round after its task
        rounds.go.release();
        writer.join();
        assertEquals(1, rounds.on(writer.thread));
        assertEquals(CacheMaintenance.IDLE, maintenance.state());
    }

    @Test
    void aRunnerPastItsHandoffRoundsLetsARequestRunItsOwn() throws Exception {
        HeldRounds rounds = new HeldRounds();
        CacheMaintenance maintenance = new CacheMaintenance(rounds, 2);
        TestKit.Forked<Void> runner = runnerHeldInItsFirstRound(maintenance, rounds);
        for (int handedOver = 0; handedOver < 2; handedOver++) {
            maintenance.request();
            rounds.go.release();
            rounds.awaitArrival();
        }
        // the runner's last round: it owed one more after its two
        assertEquals(CacheMaintenance.LAST, maintenance.state());

        maintenance.request(); // takes no turn from the runner: runs its own round
        assertEquals(1, rounds.on(Thread.currentThread()));

        rounds.go.release();
        runner.join();
        assertEquals(3, rounds.on(runner.thread));
        assertEquals(CacheMaintenance.IDLE, maintenance.state());
    }

    @Test
    void aFailingTaskStillRunsTheRoundsHandedOverAndLeavesNoRunner() throws Exception {
        aTaskThatThrowsStillRunsTheRoundsHandedOver(new IllegalStateException("the cache's task failed"));
        aTaskThatThrowsStillRunsTheRoundsHandedOver(new AssertionError("the cache's task failed"));
        // a key's hashCode, say, may throw a checked exception through code that declares none
        aTaskThatThrowsStillRunsTheRoundsHandedOver(new IOException("the cache's task failed"));
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void throwUnchecked(Throwable failure) throws T {
        throw (T) failure;
    }

    private void aTaskThatThrowsStillRunsTheRoundsHandedOver(Throwable failure) throws Exception {
        HeldRounds rounds = new HeldRounds();
        CacheMaintenance maintenance = new CacheMaintenance(rounds);
        Semaphore taskArrived = new Semaphore(0);
        Semaphore taskGo = new Semaphore(0);
        TestKit.Forked<Void> writer = TestKit.unstartedRun(
                "writer",
                () -> CacheTasks.executeInPut(maintenance, new CacheTasks.Task(() -> {
                    taskArrived.release();
                    taskGo.acquireUninterruptibly();
                    CacheMaintenanceTest.<RuntimeException>throwUnchecked(failure);
                })));
        writer.start();
        taskArrived.acquire();
        maintenance.request(); // handed over to the writer's task

        taskGo.release();
        assertSame(failure, writer.joinFailure());
        assertEquals(1, rounds.on(writer.thread), "the round handed over ran though the task failed");
        assertEquals(CacheMaintenance.IDLE, maintenance.state());
    }

    /**
     * The cache's executor runs what it is given inline, so a maintenance its scheduler delayed
     * must reach it on a thread of its own: on the JVM's one delay thread, a wait for the cache's
     * lock there (here, an executor that blocks) held up every other delayed task in the JVM.
     */
    @Test
    void aScheduledTaskLeavesTheJvmsDelayThreadBeforeTheCachesExecutorRunsIt() throws Exception {
        Semaphore executing = new Semaphore(0);
        Semaphore release = new Semaphore(0);
        Executor blocked = task -> {
            executing.release();
            release.acquireUninterruptibly();
            task.run();
        };
        CacheMaintenance.SCHEDULER.schedule(blocked, () -> {}, 0, TimeUnit.NANOSECONDS);
        try {
            assertTrue(executing.tryAcquire(30, TimeUnit.SECONDS), "the scheduled task never reached the executor");
            CompletableFuture<Void> onTheDelayThread = CompletableFuture.runAsync(
                    () -> {}, CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS, Runnable::run));
            onTheDelayThread.get(30, TimeUnit.SECONDS); // a blocked delay thread never runs it
        } finally {
            release.release();
        }
    }

    @Test
    void aTaskOfTheCachesRunsInlineWhileARunnerRuns() throws Exception {
        HeldRounds rounds = new HeldRounds();
        CacheMaintenance maintenance = new CacheMaintenance(rounds);
        TestKit.Forked<Void> runner = runnerHeldInItsFirstRound(maintenance, rounds);

        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        CacheTasks.executeInPut(maintenance, new CacheTasks.Task(() -> ranOn.add(Thread.currentThread())));
        assertEquals(List.of(Thread.currentThread()), ranOn, "run at once, on the writing thread");
        assertEquals(CacheMaintenance.RUNNING, maintenance.state(), "the runner's state untouched");

        rounds.go.release();
        runner.join();
        assertEquals(CacheMaintenance.IDLE, maintenance.state());
    }

    @Test
    void onlyThePutsMaintenanceTaskBecomesTheRunner() {
        CacheMaintenance maintenance = new CacheMaintenance(() -> {});
        int[] states = new int[3];
        // a removal notice (a configurer's listener), which the cache may send from inside its maintenance
        CacheTasks.executeInPut(maintenance, () -> states[0] = maintenance.state());
        // the cache's task delayed by its scheduler, run on the scheduler's thread, outside any put
        maintenance.execute(new CacheTasks.Task(() -> states[1] = maintenance.state()));
        // the task a put that took the cache's lock submits
        CacheTasks.executeInPut(maintenance, new CacheTasks.Task(() -> states[2] = maintenance.state()));
        assertArrayEquals(new int[] {CacheMaintenance.IDLE, CacheMaintenance.IDLE, CacheMaintenance.RUNNING}, states);
        assertEquals(CacheMaintenance.IDLE, maintenance.state());
    }

    @Test
    void refusesAHandoffOfNoRounds() {
        IllegalArgumentException refused =
                assertThrows(IllegalArgumentException.class, () -> new CacheMaintenance(() -> {}, 0));
        assertEquals("handoffRounds must be at least 1, not 0", refused.getMessage());
    }
}
