package io.refpool.sync;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** When {@code cancelAfter} cancels, and how closing or cancelling stops its timer. */
class CancellationTimerTest {
    private static final Duration LONG = Duration.ofHours(1);

    @Test
    void cancelAfterCancelsOnACancellerThreadNotTheTimerThread() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        source.token().register(() -> ranOn.set(Thread.currentThread()));

        source.cancelAfter(Duration.ofMillis(20));

        await().atMost(10, SECONDS).until(source::isCancellationRequested);
        await().atMost(10, SECONDS).until(() -> ranOn.get() != null);
        assertNotSame(Thread.currentThread(), ranOn.get());
        assertTrue(
                ranOn.get().getName().startsWith("refpool-canceller-"),
                ranOn.get().getName());
        assertTrue(ranOn.get().isDaemon());
    }

    /**
     * Every {@code cancelAfter} of the JVM shares one timer thread: a callback that blocks (as a
     * waiter a cancelled wait lets through may, running its function) must not hold it, or no
     * other timer fires, the one that would end its own wait included.
     */
    @Test
    void aCallbackThatBlocksHoldsBackNoOtherTimer() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch blocking = new java.util.concurrent.CountDownLatch(1);
        CancellationSource slow = new CancellationSource();
        slow.token().register(() -> {
            blocking.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            slow.cancelAfter(Duration.ofMillis(1));
            assertTrue(blocking.await(10, SECONDS));
            CancellationSource other = new CancellationSource();
            other.cancelAfter(Duration.ofMillis(1));
            await().atMost(10, SECONDS).until(other::isCancellationRequested);
        } finally {
            release.countDown();
        }
    }

    @Test
    void cancelAfterWithAnExecutorHandsTheCancelToIt() throws Exception {
        java.util.concurrent.ExecutorService cancels =
                java.util.concurrent.Executors.newSingleThreadExecutor(task -> new Thread(task, "cancels"));
        try {
            CancellationSource source = new CancellationSource();
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            source.token().register(() -> ranOn.set(Thread.currentThread()));

            source.cancelAfter(Duration.ofMillis(20), cancels);

            await().atMost(10, SECONDS).until(() -> ranOn.get() != null);
            assertTrue(ranOn.get().getName().equals("cancels"), ranOn.get().getName());
        } finally {
            cancels.shutdown();
        }
    }

    @Test
    void cancelAfterWithAnExecutorThatThrowsCancelsOnTheTimerThread() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        source.token().register(() -> ranOn.set(Thread.currentThread()));

        source.cancelAfter(Duration.ofMillis(20), task -> {
            throw new java.util.concurrent.RejectedExecutionException("full");
        });

        await().atMost(10, SECONDS).until(() -> ranOn.get() != null);
        assertTrue(
                ranOn.get().getName().startsWith("refpool-cancellation-timer"),
                ranOn.get().getName());
        assertThrows(NullPointerException.class, () -> new CancellationSource().cancelAfter(LONG, null));
    }

    /**
     * A cancel handed to the executor and still in its queue when the source is closed, or its
     * timer replaced, does not cancel: as with the timer thread, close and a later cancelAfter
     * stop what the earlier one armed.
     */
    @Test
    void aHandedOffCancelStillQueuedWhenTheTimerIsClosedOrReplacedDoesNothing() {
        java.util.List<Runnable> queued = new java.util.concurrent.CopyOnWriteArrayList<>();
        CancellationSource replaced = new CancellationSource();
        replaced.cancelAfter(Duration.ofMillis(1), queued::add);
        await().atMost(10, SECONDS).until(() -> queued.size() == 1);
        replaced.cancelAfter(LONG, queued::add);
        queued.get(0).run();
        assertFalse(replaced.isCancellationRequested(), "the later cancelAfter replaced it");

        CancellationSource closed = new CancellationSource();
        closed.cancelAfter(Duration.ofMillis(1), queued::add);
        await().atMost(10, SECONDS).until(() -> queued.size() == 2);
        closed.close();
        queued.get(1).run();
        assertFalse(closed.isCancellationRequested(), "close stopped it");

        CancellationSource armed = new CancellationSource();
        armed.cancelAfter(Duration.ofMillis(1), queued::add);
        await().atMost(10, SECONDS).until(() -> queued.size() == 3);
        queued.get(2).run();
        assertTrue(armed.isCancellationRequested(), "still armed: it cancels");
        replaced.close();
    }

    /**
     * Runs {@code arm} with the timer it schedules held between its scheduling and its installation
     * as the source's until the timer has fired; {@code thenBeforeInstall} runs next, still before
     * the installation.
     */
    private static void armFiringBeforeInstall(Runnable arm, Runnable thenBeforeInstall) {
        CancellationSource.scheduledForTests = timer -> { // the arming thread, between schedule and install
            await().atMost(10, SECONDS).until(timer::isDone); // the timer fired
            thenBeforeInstall.run();
        };
        try {
            arm.run();
        } finally {
            CancellationSource.scheduledForTests = null;
        }
    }

    /**
     * A hand-off timer that fires before the arming thread has installed it as the source's timer
     * still cancels, once installed, and the cancel is handed over by the timer thread, never by
     * the arming thread: here the executor runs it at once, so it runs on the timer thread, once.
     */
    @Test
    void aHandedOffTimerThatFiresBeforeItIsInstalledStillCancelsFromTheTimerThread() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Thread> cancelledOn = new AtomicReference<>();
        source.token().register(() -> cancelledOn.set(Thread.currentThread()));
        java.util.List<Thread> handedOverBy = new java.util.concurrent.CopyOnWriteArrayList<>();
        armFiringBeforeInstall(
                () -> source.cancelAfter(Duration.ofMillis(1), task -> {
                    handedOverBy.add(Thread.currentThread());
                    task.run();
                }),
                () -> assertFalse(source.isCancellationRequested(), "not installed yet: it cannot cancel"));
        await().atMost(10, SECONDS).until(() -> cancelledOn.get() != null);
        assertTrue(
                cancelledOn.get().getName().startsWith("refpool-cancellation-timer"),
                cancelledOn.get().getName());
        assertEquals(1, handedOverBy.size(), "handed over once");
        assertSame(cancelledOn.get(), handedOverBy.get(0));
    }

    /**
     * The same with an executor that refuses: the cancel runs on the timer thread, whose handler
     * a failing callback reaches; before, the arming thread handed it over and ran it on refusal,
     * inside {@code cancelAfter}.
     */
    @Test
    void aRefusedCancelOfATimerThatFiredBeforeItWasInstalledRunsOnTheTimerThread() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Thread> cancelledOn = new AtomicReference<>();
        source.token().register(() -> cancelledOn.set(Thread.currentThread()));
        armFiringBeforeInstall(
                () -> source.cancelAfter(Duration.ofMillis(1), task -> {
                    throw new java.util.concurrent.RejectedExecutionException("full");
                }),
                () -> {});
        await().atMost(10, SECONDS).until(() -> cancelledOn.get() != null);
        assertTrue(
                cancelledOn.get().getName().startsWith("refpool-cancellation-timer"),
                cancelledOn.get().getName());
    }

    /**
     * A timer that fires before its {@code cancelAfter} installed it, when {@code close()} comes in
     * between: the {@code cancelAfter} fails, and nothing is cancelled. Before, the plain timer
     * cancelled the source as it fired, so the failed call had changed it after all.
     */
    @Test
    void aTimerThatFiresBeforeACloseThatFailsItsCancelAfterCancelsNothing() {
        for (boolean handOff : new boolean[] {false, true}) {
            CancellationSource source = new CancellationSource();
            java.util.List<Runnable> handedOver = new java.util.concurrent.CopyOnWriteArrayList<>();
            assertThrows(
                    IllegalStateException.class,
                    () -> armFiringBeforeInstall(
                            () -> {
                                if (handOff) {
                                    source.cancelAfter(Duration.ofMillis(1), handedOver::add);
                                } else {
                                    source.cancelAfter(Duration.ofMillis(1));
                                }
                            },
                            source::close));
            handedOver.forEach(Runnable::run);
            assertFalse(source.isCancellationRequested(), handOff ? "handed off" : "plain");
            assertNull(source.pendingTimer());
        }
    }

    @Test
    void cancelAfterZeroCancelsNowOnThisThread() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        source.token().register(() -> ranOn.set(Thread.currentThread()));

        source.cancelAfter(Duration.ZERO);

        assertTrue(source.isCancellationRequested());
        assertSame(Thread.currentThread(), ranOn.get());
    }

    @Test
    void closeBeforeTheTimerFiresRemovesTheTimer() {
        CancellationSource source = new CancellationSource();
        source.cancelAfter(LONG);
        ScheduledFuture<?> timer = source.pendingTimer();
        assertNotNull(timer);
        assertTrue(CancellationTimers.isQueued(timer));

        source.close();

        assertTrue(timer.isCancelled());
        assertFalse(CancellationTimers.isQueued(timer), "a closed source's timer must leave the scheduler");
        assertNull(source.pendingTimer());
        assertFalse(source.isCancellationRequested());
    }

    @Test
    void laterCancelAfterReplacesTheEarlierTimer() {
        CancellationSource source = new CancellationSource();
        source.cancelAfter(LONG);
        ScheduledFuture<?> first = source.pendingTimer();

        source.cancelAfter(LONG.multipliedBy(2));
        ScheduledFuture<?> second = source.pendingTimer();

        assertTrue(first.isCancelled());
        assertFalse(CancellationTimers.isQueued(first));
        assertTrue(CancellationTimers.isQueued(second));
        source.close();
        assertFalse(CancellationTimers.isQueued(second));
    }

    @Test
    void shorterLaterDelayWins() {
        CancellationSource source = new CancellationSource();
        source.cancelAfter(LONG);

        source.cancelAfter(Duration.ofMillis(20));

        await().atMost(10, SECONDS).until(source::isCancellationRequested);
    }

    @Test
    void cancelRemovesThePendingTimer() {
        CancellationSource source = new CancellationSource();
        source.cancelAfter(LONG);
        ScheduledFuture<?> timer = source.pendingTimer();

        source.cancel();

        assertTrue(timer.isCancelled());
        assertFalse(CancellationTimers.isQueued(timer));
        assertNull(source.pendingTimer());
    }

    @Test
    void cancelAfterOnACancelledSourceSchedulesNothing() {
        CancellationSource source = new CancellationSource();
        source.cancel();

        source.cancelAfter(LONG);

        assertNull(source.pendingTimer());
    }

    @Test
    void cancelAfterOnAClosedSourceThrowsAndSchedulesNothing() {
        CancellationSource source = new CancellationSource();
        source.close();

        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> source.cancelAfter(LONG));
        assertThrows(IllegalStateException.class, () -> source.cancelAfter(Duration.ZERO));

        assertTrue(thrown.getMessage().contains("closed"), thrown.getMessage());
        assertNull(source.pendingTimer());
        assertFalse(source.isCancellationRequested());
    }

    @Test
    void delayTooLongForNanosecondsIsAccepted() {
        CancellationSource source = new CancellationSource();

        source.cancelAfter(Duration.ofSeconds(Long.MAX_VALUE));

        assertTrue(CancellationTimers.isQueued(source.pendingTimer()));
        source.close();
    }

    @Test
    void callbackFailureOnTheTimerThreadGoesToTheUncaughtExceptionHandler() {
        CancellationSource source = new CancellationSource();
        IllegalStateException thrown = new IllegalStateException("from a timed cancel");
        source.token().register(() -> {
            throw thrown;
        });
        AtomicReference<Throwable> reported = new AtomicReference<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, failure) -> reported.set(failure));
        try {
            source.cancelAfter(Duration.ofMillis(1));

            await().dontCatchUncaughtExceptions().atMost(10, SECONDS).until(() -> reported.get() != null);
            assertSame(thrown, reported.get());
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }

    @Test
    void checkedFailureOfATimedCancelReachesTheHandlerWithTheOthersSuppressed() {
        CancellationSource source = new CancellationSource();
        OutOfMemoryError later = new OutOfMemoryError("runs second");
        IOException first = new IOException("runs first");
        source.token().register(() -> {
            throw later;
        });
        source.token().register(() -> sneakyThrow(first));
        AtomicReference<Throwable> reported = new AtomicReference<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, failure) -> reported.set(failure));
        try {
            source.cancelAfter(Duration.ofMillis(1));

            await().dontCatchUncaughtExceptions().atMost(10, SECONDS).until(() -> reported.get() != null);
            UndeclaredThrowableException wrapper = assertInstanceOf(UndeclaredThrowableException.class, reported.get());
            assertSame(first, wrapper.getCause());
            assertArrayEquals(new Throwable[] {later}, wrapper.getSuppressed());
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }

    @Test
    void checkedFailureOfCancelAfterZeroIsThrownWithTheOthersSuppressed() {
        CancellationSource source = new CancellationSource();
        IllegalStateException later = new IllegalStateException("runs second");
        IOException first = new IOException("runs first");
        source.token().register(() -> {
            throw later;
        });
        source.token().register(() -> sneakyThrow(first));

        UndeclaredThrowableException caught =
                assertThrows(UndeclaredThrowableException.class, () -> source.cancelAfter(Duration.ZERO));

        assertSame(first, caught.getCause());
        assertArrayEquals(new Throwable[] {later}, caught.getSuppressed());
        assertTrue(source.isCancellationRequested());
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneakyThrow(Throwable failure) throws T {
        throw (T) failure;
    }
}
