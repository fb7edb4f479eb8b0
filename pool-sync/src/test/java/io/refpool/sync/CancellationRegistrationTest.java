package io.refpool.sync;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/** What {@code unregister()} returns and when {@code close()} waits for a running callback. */
class CancellationRegistrationTest {
    private static final long BOUND_SECONDS = 10;

    private final List<Thread> started = new ArrayList<>();
    private final AtomicReference<Throwable> threadFailure = new AtomicReference<>();

    @AfterEach
    void noHelperThreadFailedOrHangs() throws InterruptedException {
        for (Thread thread : started) {
            thread.join(TimeUnit.SECONDS.toMillis(BOUND_SECONDS));
            assertFalse(thread.isAlive(), thread.getName() + " still runs");
        }
        assertNull(threadFailure.get(), "a helper thread failed");
    }

    @Test
    void unregisterBeforeCancelRemovesTheCallback() {
        CancellationSource source = new CancellationSource();
        AtomicInteger runs = new AtomicInteger();
        Registration registration = source.token().register(runs::incrementAndGet);
        assertEquals(1, source.registrationCount());

        assertTrue(registration.unregister());
        assertFalse(registration.unregister());
        source.cancel();

        assertEquals(0, runs.get());
        assertEquals(0, source.registrationCount());
    }

    @Test
    void unregisterAfterTheCallbackRanReturnsFalse() {
        CancellationSource source = new CancellationSource();
        Registration registration = source.token().register(() -> {});
        source.cancel();

        assertFalse(registration.unregister());
        registration.close();
    }

    @Test
    void callbackUnregisteringALaterCallbackOfTheSameCancelSuppressesIt() {
        CancellationSource source = new CancellationSource();
        AtomicBoolean olderRan = new AtomicBoolean();
        AtomicBoolean removed = new AtomicBoolean();
        Registration older = source.token().register(() -> olderRan.set(true));
        source.token().register(() -> removed.set(older.unregister()));

        source.cancel();

        assertTrue(removed.get(), "unregister of a selected, not yet invoked callback returns true");
        assertFalse(olderRan.get(), "the unregistered callback must not run");
    }

    @Test
    void callbackClosingALaterCallbackOfTheSameCancelSuppressesIt() {
        CancellationSource source = new CancellationSource();
        AtomicBoolean olderRan = new AtomicBoolean();
        Registration older = source.token().register(() -> olderRan.set(true));
        source.token().register(older::close);

        source.cancel();

        assertFalse(olderRan.get());
    }

    @Test
    void callbackUnregisteringAnEarlierRunCallbackGetsFalse() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Registration> newer = new AtomicReference<>();
        AtomicReference<Boolean> removed = new AtomicReference<>();
        source.token().register(() -> removed.set(newer.get().unregister()));
        newer.set(source.token().register(() -> {}));

        source.cancel();

        assertEquals(Boolean.FALSE, removed.get());
    }

    @Test
    void closeWaitsForTheCallbackRunningOnAnotherThread() throws Exception {
        CancellationSource source = new CancellationSource();
        BlockingCallback callback = new BlockingCallback();
        Registration registration = source.token().register(callback);
        start("canceller", source::cancel);
        callback.awaitEntered();
        AtomicBoolean finishedWhenCloseReturned = new AtomicBoolean();

        Thread closer = start("closer", () -> {
            registration.close();
            finishedWhenCloseReturned.set(callback.finished.get());
        });
        awaitParkedOn(closer, registration);
        assertTrue(closer.isAlive(), "close() returned while the callback was still running");
        callback.release();
        closer.join(SECONDS.toMillis(BOUND_SECONDS));

        assertFalse(closer.isAlive());
        assertTrue(finishedWhenCloseReturned.get(), "close() returned before the callback finished");
    }

    @Test
    void everyClosingThreadWaitsForTheRunningCallback() throws Exception {
        CancellationSource source = new CancellationSource();
        BlockingCallback callback = new BlockingCallback();
        Registration registration = source.token().register(callback);
        start("canceller", source::cancel);
        callback.awaitEntered();
        AtomicInteger sawFinished = new AtomicInteger();

        List<Thread> closers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            closers.add(start("closer-" + i, () -> {
                registration.close();
                if (callback.finished.get()) {
                    sawFinished.incrementAndGet();
                }
            }));
        }
        for (Thread closer : closers) {
            awaitParkedOn(closer, registration);
        }
        callback.release();
        for (Thread closer : closers) {
            closer.join(SECONDS.toMillis(BOUND_SECONDS));
        }

        assertEquals(3, sawFinished.get());
    }

    @Test
    void closeKeepsWaitingWhenInterruptedAndKeepsTheInterrupt() throws Exception {
        CancellationSource source = new CancellationSource();
        BlockingCallback callback = new BlockingCallback();
        Registration registration = source.token().register(callback);
        start("canceller", source::cancel);
        callback.awaitEntered();
        AtomicBoolean finishedWhenCloseReturned = new AtomicBoolean();
        AtomicBoolean interruptKept = new AtomicBoolean();

        Thread closer = start("closer", () -> {
            registration.close();
            finishedWhenCloseReturned.set(callback.finished.get());
            interruptKept.set(Thread.currentThread().isInterrupted());
        });
        awaitParkedOn(closer, registration);
        closer.interrupt();
        awaitParkedOn(closer, registration);
        callback.release();
        closer.join(SECONDS.toMillis(BOUND_SECONDS));

        assertTrue(finishedWhenCloseReturned.get());
        assertTrue(interruptKept.get());
    }

    @Test
    void closeInsideItsOwnCallbackReturnsAtOnce() throws Exception {
        CancellationSource source = new CancellationSource();
        AtomicReference<Registration> self = new AtomicReference<>();
        AtomicBoolean closeReturned = new AtomicBoolean();
        self.set(source.token().register(() -> {
            self.get().close();
            closeReturned.set(true);
        }));

        Thread canceller = start("canceller", source::cancel);
        canceller.join(SECONDS.toMillis(BOUND_SECONDS));

        assertTrue(closeReturned.get(), "close() inside its own callback must not wait for itself");
    }

    @Test
    void closeInsideAnotherSourcesDispatchDoesNotWait() throws Exception {
        CancellationSource blocked = new CancellationSource();
        BlockingCallback blockedCallback = new BlockingCallback();
        Registration blockedRegistration = blocked.token().register(blockedCallback);
        start("blocked canceller", blocked::cancel);
        blockedCallback.awaitEntered();
        CancellationSource other = new CancellationSource();
        AtomicBoolean returnedWhileRunning = new AtomicBoolean();
        other.token().register(() -> {
            blockedRegistration.close();
            returnedWhileRunning.set(!blockedCallback.finished.get());
        });

        Thread canceller = start("other canceller", other::cancel);
        canceller.join(SECONDS.toMillis(BOUND_SECONDS));
        blockedCallback.release();

        assertTrue(returnedWhileRunning.get());
    }

    @Test
    void callbacksOfTwoSourcesClosingEachOthersRegistrationsDoNotDeadlock() throws Exception {
        CancellationSource first = new CancellationSource();
        CancellationSource second = new CancellationSource();
        CyclicBarrier bothRunning = new CyclicBarrier(2);
        AtomicReference<Registration> firstRegistration = new AtomicReference<>();
        AtomicReference<Registration> secondRegistration = new AtomicReference<>();
        AtomicInteger closed = new AtomicInteger();
        firstRegistration.set(first.token().register(() -> {
            awaitBarrier(bothRunning);
            secondRegistration.get().close();
            closed.incrementAndGet();
        }));
        secondRegistration.set(second.token().register(() -> {
            awaitBarrier(bothRunning);
            firstRegistration.get().close();
            closed.incrementAndGet();
        }));

        Thread one = start("first canceller", first::cancel);
        Thread two = start("second canceller", second::cancel);
        one.join(SECONDS.toMillis(BOUND_SECONDS));
        two.join(SECONDS.toMillis(BOUND_SECONDS));

        assertEquals(2, closed.get(), "both callbacks must get past close()");
    }

    @Test
    void closeOfAFinishedOrRemovedRegistrationReturnsAtOnce() {
        CancellationSource source = new CancellationSource();
        Registration removed = source.token().register(() -> {});
        Registration finished = source.token().register(() -> {});
        removed.unregister();
        source.cancel();

        removed.close();
        finished.close();
        CancellationToken.none().register(() -> {}).close();
    }

    @Test
    @EnabledForJreRange(min = JRE.JAVA_21)
    void closeOnAVirtualThreadParksUntilTheCallbackFinished() throws Exception {
        CancellationSource source = new CancellationSource();
        BlockingCallback callback = new BlockingCallback();
        Registration registration = source.token().register(callback);
        start("canceller", source::cancel);
        callback.awaitEntered();
        AtomicBoolean finishedWhenCloseReturned = new AtomicBoolean();

        Thread closer = (Thread)
                Thread.class.getMethod("startVirtualThread", Runnable.class).invoke(null, (Runnable) () -> {
                    registration.close();
                    finishedWhenCloseReturned.set(callback.finished.get());
                });
        awaitParkedOn(closer, registration);
        callback.release();
        closer.join(SECONDS.toMillis(BOUND_SECONDS));

        assertFalse(closer.isAlive());
        assertTrue(finishedWhenCloseReturned.get());
    }

    private Thread start(String name, Runnable body) {
        Thread thread = new Thread(
                () -> {
                    try {
                        body.run();
                    } catch (Throwable failure) {
                        threadFailure.compareAndSet(null, failure);
                    }
                },
                name);
        thread.setDaemon(true);
        started.add(thread);
        thread.start();
        return thread;
    }

    private static void awaitParkedOn(Thread thread, Object blocker) {
        await().atMost(BOUND_SECONDS, SECONDS)
                .until(() -> thread.getState() == Thread.State.WAITING && LockSupport.getBlocker(thread) == blocker);
    }

    private static void awaitBarrier(CyclicBarrier barrier) {
        try {
            barrier.await(BOUND_SECONDS, SECONDS);
        } catch (Exception e) {
            throw new AssertionError("barrier broken", e);
        }
    }

    /** A callback that signals it started and then holds its thread until released. */
    private static final class BlockingCallback implements Runnable {
        final AtomicBoolean finished = new AtomicBoolean();
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void run() {
            entered.countDown();
            try {
                if (!release.await(BOUND_SECONDS, SECONDS)) {
                    throw new AssertionError("callback was never released");
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            finished.set(true);
        }

        void awaitEntered() throws InterruptedException {
            assertTrue(entered.await(BOUND_SECONDS, SECONDS), "callback did not start");
        }

        void release() {
            release.countDown();
        }
    }
}
