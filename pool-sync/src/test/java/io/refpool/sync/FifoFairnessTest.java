package io.refpool.sync;

import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every primitive whose waiters exclude each other serves them in call order, async, blocking and
 * timed waiters in one line, and lets nobody barge past them, not even between the pop of the head
 * and its grant.
 */
class FifoFairnessTest {
    private static final int WAITERS = 50;
    private static final int BLOCKING_WAITERS = 10;

    /** {@return {@code guard}'s owner recorded as {@code name} in {@code order}, released at once} */
    private static Void enter(List<String> order, String name, Guard guard) {
        try (guard) {
            order.add(name);
        }
        return null;
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void asyncWaitersAreGrantedInCallOrder(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        List<String> order = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            String name = String.valueOf(i);
            lock.acquire().thenAccept(guard -> enter(order, name, guard));
        }
        assertEquals(WAITERS, lock.queueLength());

        lock.release();

        assertEquals(IntStream.range(0, WAITERS).mapToObj(String::valueOf).collect(Collectors.toList()), order);
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void blockingWaitersAreGrantedInCallOrder(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        List<String> order = new ArrayList<>(); // written under the lock only
        List<TestKit.Forked<Void>> threads = new ArrayList<>();
        for (int i = 0; i < BLOCKING_WAITERS; i++) {
            String name = String.valueOf(i);
            threads.add(fork("waiter-" + i, () -> enter(order, name, lock.acquireBlocking())));
            int queued = i + 1;
            eventually().until(() -> lock.queueLength() == queued); // the next calls only once this one is in line
        }

        lock.release();
        for (TestKit.Forked<Void> t : threads) {
            t.join();
        }

        assertEquals(
                IntStream.range(0, BLOCKING_WAITERS).mapToObj(String::valueOf).collect(Collectors.toList()), order);
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void asyncBlockingAndTimedWaitersShareOneLine(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        List<String> order = new ArrayList<>();
        lock.acquire().thenAccept(guard -> enter(order, "async-0", guard));
        TestKit.Forked<Void> blocking = fork("blocking-1", () -> enter(order, "blocking-1", lock.acquireBlocking()));
        eventually().until(() -> lock.queueLength() == 2);
        TestKit.Forked<Optional<Guard>> timed = fork("timed-2", () -> {
            Optional<Guard> guard = lock.tryAcquire(TestKit.BOUND);
            guard.ifPresent(g -> enter(order, "timed-2", g));
            return guard;
        });
        eventually().until(() -> lock.queueLength() == 3);
        CompletableFuture<Void> last = lock.acquire()
                .thenAccept(guard -> enter(order, "async-3", guard))
                .toCompletableFuture();

        lock.release();
        blocking.join();
        assertTrue(timed.join().isPresent(), "the timed waiter got the lock in its turn");
        last.get(TestKit.BOUND.toMillis(), TimeUnit.MILLISECONDS);

        assertEquals(List.of("async-0", "blocking-1", "timed-2", "async-3"), order);
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void releaseHandsOwnershipToTheHeadWaiter(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> head = waiting(lock.acquire());
        CompletableFuture<Guard> second = waiting(lock.acquire());

        lock.release();

        Guard guard = granted(head);
        assertFalse(second.isDone());
        assertTrue(lock.isHeld(), "the lock passed to the head without ever being free");
        assertEquals(1, lock.queueLength());
        guard.close();
        granted(second).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void newcomerCannotTakeTheLockWhileWaitersAreQueued(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> first = waiting(lock.acquire());
        CompletableFuture<Guard> second = waiting(lock.acquire());

        lock.release(); // handoff to first; second still queued

        assertFalse(lock.tryHold(), "a take without waiting after a handoff while the queue is non-empty");
        assertTrue(lock.tryAcquire().isEmpty());
        granted(first).close(); // handoff to second; the queue is empty now
        assertFalse(lock.tryHold(), "second owns the lock");
        granted(second).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void newcomerCannotBargeBetweenPopAndGrant(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> head = waiting(lock.acquire());
        Primitive.PausedRelease release = lock.releasePausedAfterPop(); // the queue is empty now

        assertEquals(0, lock.queueLength());
        assertFalse(lock.tryHold(), "a newcomer barged into a lock assigned to the popped head");
        assertTrue(lock.tryAcquire(Duration.ZERO).isEmpty());
        CompletableFuture<Guard> newcomer = waiting(lock.acquire());

        release.finish();
        granted(head).close();
        granted(newcomer).close();
        lock.assertFreeAndUsable();
    }
}
