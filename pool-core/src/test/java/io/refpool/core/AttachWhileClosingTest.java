package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.core.internal.PoolCore;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An attach that is granted the gate while the pool closes fails with {@link PoolClosedException}
 * and leaves its thread detached: not counted as attached, and not able to "nest" into an
 * attachment it never got.
 *
 * <p>The interleaving is forced through the pool's closing token, which {@code close()} cancels
 * after marking the pool closed: a callback registered after the waiter's own (so it runs first)
 * lets the gate's holder go, and the waiter is granted the gate in a closed pool before its own
 * cancellation callback could run.
 */
class AttachWhileClosingTest {
    private static final long BOUND = TestKit.BOUND.toSeconds();

    /** What the waiter saw: its attach's failure, then whether it counted as attached. */
    private static final class Outcome {
        Throwable attachFailure;
        boolean attachedAfterwards;
        Throwable secondAttachFailure;
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void anAttachGrantedInAClosingPoolFailsAndLeavesTheThreadDetached(AttachMode mode) throws Exception {
        TestResources resources = new TestResources();
        RefPool<String, Resource> pool = resources.pool(mode);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        Forked<Void> holder = forkRun("holder", () -> {
            try (Attachment stopTheWorld = pool.stopTheWorld()) {
                held.countDown();
                assertTrue(letGo.await(BOUND, TimeUnit.SECONDS));
            }
        });
        assertTrue(held.await(BOUND, TimeUnit.SECONDS));

        Forked<Outcome> waiter = fork("waiter", () -> {
            Outcome outcome = new Outcome();
            try {
                pool.attach().close();
            } catch (RuntimeException e) {
                outcome.attachFailure = e;
            }
            outcome.attachedAfterwards = pool.isAttached();
            try {
                pool.attach().close();
            } catch (RuntimeException e) {
                outcome.secondAttachFailure = e;
            }
            return outcome;
        });
        awaitParked(waiter.thread);

        closingToken(pool).register(() -> {
            letGo.countDown(); // the holder detaches and the gate goes to the waiter
            try {
                waiter.join();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        forkRun("closer", pool::close).join();
        holder.join();

        Outcome outcome = waiter.join();
        assertTrue(
                outcome.attachFailure instanceof PoolClosedException,
                () -> "attach failed with " + outcome.attachFailure);
        assertFalse(outcome.attachedAfterwards, "the failed attach left its thread counted as attached");
        assertTrue(
                outcome.secondAttachFailure instanceof PoolClosedException,
                () -> "a later attach on that thread should be refused, but it "
                        + (outcome.secondAttachFailure == null
                                ? "nested into nothing"
                                : "failed with " + outcome.secondAttachFailure));
        assertEquals(0, pool.stats().pendingDecrements());
    }

    /** The pool's closing token, which {@code close()} cancels once the pool is marked closed. */
    private static CancellationToken closingToken(RefPool<?, ?> pool) throws ReflectiveOperationException {
        Method closingToken = PoolCore.class.getDeclaredMethod("closingToken");
        closingToken.setAccessible(true);
        return (CancellationToken) closingToken.invoke(pool.core());
    }
}
