package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Calls that could wait for each other in {@code PER_OBJECT} mode: each either runs or is refused,
 * never left waiting for ever.
 */
@Timeout(60)
class CallsWaitingForEachOtherTest {
    private final RefPool<String, Object> pool = RefPool.builder((String key) -> new Object())
            .attachMode(AttachMode.PER_OBJECT)
            .idle(cache -> cache.maximumSize(64))
            .name("each-other")
            .build();

    @AfterEach
    void close() {
        pool.close(Duration.ofSeconds(5)); // bounded: a call left waiting would keep a plain close for ever
    }

    private static Throwable failureWithin(TestKit.Forked<?> forked) throws Exception {
        try {
            forked.outcome.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return fail(forked.thread.getName() + " still waits: " + TestKit.describeStack(forked.thread));
        }
    }

    /**
     * Two-key calls take the earlier-made object's section first. A two-key call from inside the
     * later object's section would wait for the earlier one's, held by a two-key call waiting for
     * the later one's: refused at once, as it is from inside the earlier one's.
     */
    @Test
    void aTwoKeyCallInsideTheSectionOfItsLaterKeyIsRefused() throws Exception {
        pool.call("a", a -> a); // made first: first in the order two-key calls take sections in
        pool.call("b", b -> b);
        CountDownLatch holdingB = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        TestKit.Forked<String> nested = fork(
                "holds-b",
                () -> pool.call("b", b -> {
                    holdingB.countDown();
                    assertTrue(go.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                    return pool.call("a", "b", (a, b2) -> "ran");
                }));
        assertTrue(holdingB.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        TestKit.Forked<String> plain = fork("calls-a-b", () -> pool.call("a", "b", (a, b) -> "plain"));
        awaitParked(plain.thread); // holds a's section, waits for b's
        go.countDown();

        IllegalStateException refused = assertInstanceOf(IllegalStateException.class, failureWithin(nested));
        assertTrue(
                refused.getMessage().startsWith("a call on the object of key 'b' in pool 'each-other'"),
                refused.getMessage());
        assertEquals("plain", plain.join());
    }

    /**
     * A {@code callAsync} function queued for a thread holds its object's section. With the default
     * call executor, functions that are running and call that object's key (as many as the common
     * fork-join pool has threads, which would all wait for the queued one) still get it: the queued
     * function has a thread of its own.
     */
    @Test
    void functionsCallingTheKeyOfAQueuedFunctionFinishOnTheDefaultExecutor() throws Exception {
        int running = Math.max(1, ForkJoinPool.getCommonPoolParallelism());
        CountDownLatch allRunning = new CountDownLatch(running);
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<String>> nested = new ArrayList<>();
        for (int i = 0; i < running; i++) {
            nested.add(pool.callAsync("b" + i, CancellationToken.none(), b -> {
                        allRunning.countDown();
                        assertTrue(go.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                        return pool.call("a", a -> "then a");
                    })
                    .toCompletableFuture());
        }
        assertTrue(allRunning.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        CompletableFuture<String> queued = pool.callAsync("a", CancellationToken.none(), a -> "a")
                .toCompletableFuture(); // every wait granted at once: handed over holding a's section
        go.countDown();

        for (CompletableFuture<String> call : nested) {
            assertEquals("then a", call.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        }
        assertEquals("a", queued.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
    }
}
