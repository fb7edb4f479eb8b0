package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A timed wait that runs out lets the waiters behind it through, and their continuations run
 * where the wait was ended. The pool ends its timed waits on a thread of its own, never on the
 * JVM's one timer thread, which every {@code cancelAfter} shares: another request's work run
 * there (its function, its factory, its disposers) would hold back every timer of the JVM, and a
 * timed wait inside it would never end.
 */
class TimedWaitEndsOffTheTimerThreadTest {
    private final TestResources resources = new TestResources();

    @Test
    void aWaiterLetThroughByATimedOutStopRunsOffTheTimerThread() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(AttachMode.SHARED));
        pool.core().setGateBiasForTests(false); // every hold on the plain gate word, in one line
        CountDownLatch letGo = new CountDownLatch(1);
        TestKit.Forked<Void> holder = TestKeyedPoolFixtures.attachedUntil(pool, letGo);
        TestKit.Forked<Throwable> stopper = fork("stopper", () -> {
            try (Attachment alone = pool.stopTheWorld(Duration.ofSeconds(1))) {
                return null;
            } catch (WaitTimeoutException expected) {
                return expected;
            }
        });
        eventually().until(() -> pool.core().gateQueueLength() == 1);
        CompletableFuture<String> behind = pool.attachAsync(
                        CancellationToken.none(),
                        attachment -> Thread.currentThread().getName())
                .toCompletableFuture(); // shared, but in line behind the stop (while its second lasts)

        String ranOn = behind.get(BOUND.toSeconds(), TimeUnit.SECONDS); // let through when the stop's wait ended
        assertInstanceOf(WaitTimeoutException.class, stopper.join());
        assertFalse(ranOn.startsWith("refpool-cancellation-timer"), "ran on " + ranOn);
        letGo.countDown();
        holder.join();
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
