package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The drainer threads every pool shares run a pool's disposers and nothing else of it: a factory or
 * an {@code attachAsync} function whose wait a drain granted, and a warm-up, run elsewhere, so that
 * slow ones hold up no other pool's drains.
 */
class SharedDrainerThreadsTest {
    private static final String DRAINER = "refpool-drainer-";

    /** Another pool's handle closed off the attachment is disposed by a drain within the bound. */
    private static boolean anotherPoolDrains() throws InterruptedException {
        CountDownLatch disposed = new CountDownLatch(1);
        RefPool<String, Object> other = RefPool.builder((String k) -> new Object())
                .disposer(o -> disposed.countDown())
                .drainDelay(Duration.ofMillis(10))
                .build();
        try {
            other.attached(() -> other.acquire("x")).close(); // detached: pending, for a drain
            return disposed.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            other.close();
        }
    }

    @Test
    void aCreationWhoseCapacityADrainGrantedRunsItsFactoryOffTheDrainer() throws Exception {
        AtomicReference<String> factoryThread = new AtomicReference<>();
        RefPool<String, Object> pool = RefPool.builder((String k) -> {
                    if (k.equals("b")) {
                        factoryThread.set(Thread.currentThread().getName());
                    }
                    return new Object();
                })
                .maxObjects(1)
                .drainDelay(Duration.ofMillis(10))
                .build();
        Handle<Object> a = pool.attached(() -> pool.acquire("a"));
        CompletableFuture<Handle<Object>> b =
                pool.acquireAsync("b", CancellationToken.none()).toCompletableFuture();
        a.close(); // detached: a drain disposes 'a', and its permit goes to 'b'
        b.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).close();
        pool.close();
        assertFalse(factoryThread.get().startsWith(DRAINER), factoryThread.get());
    }

    @Test
    void slowFactoriesOfFourPoolsGrantedByDrainsHoldUpNoOtherPoolsDrain() throws Exception {
        CountDownLatch entered = new CountDownLatch(4);
        CountDownLatch finish = new CountDownLatch(1);
        List<RefPool<String, Object>> slowPools = new ArrayList<>();
        List<CompletableFuture<Handle<Object>>> waiting = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) { // as many as the shared drainer threads
                RefPool<String, Object> slow = RefPool.builder((String k) -> {
                            if (k.equals("b")) {
                                entered.countDown();
                                finish.await(); // a slow engine start
                            }
                            return new Object();
                        })
                        .maxObjects(1)
                        .drainDelay(Duration.ofMillis(10))
                        .build();
                slowPools.add(slow);
                Handle<Object> a = slow.attached(() -> slow.acquire("a"));
                waiting.add(slow.acquireAsync("b", CancellationToken.none()).toCompletableFuture());
                a.close();
            }
            assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            assertTrue(anotherPoolDrains(), "every shared drainer thread runs another pool's factory");
        } finally {
            finish.countDown();
            for (int i = 0; i < slowPools.size(); i++) {
                waiting.get(i).get(BOUND.toMillis(), TimeUnit.MILLISECONDS).close();
                slowPools.get(i).close();
            }
        }
    }

    @Test
    void slowWarmUpsHoldUpNoPoolsDrain() throws Exception {
        CountDownLatch entered = new CountDownLatch(4);
        CountDownLatch finish = new CountDownLatch(1);
        RefPool<String, Object> warming = RefPool.builder((String k) -> {
                    entered.countDown();
                    finish.await();
                    return new Object();
                })
                .idle(cache -> cache.maximumSize(16))
                .build(); // no executor of its own
        List<CompletableFuture<Integer>> warmUps = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                warmUps.add(warming.warmUp(List.of("tenant-" + i), CancellationToken.none())
                        .toCompletableFuture());
            }
            assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            assertTrue(anotherPoolDrains(), "four warm-ups hold every shared drainer thread");
        } finally {
            finish.countDown();
            for (CompletableFuture<Integer> w : warmUps) {
                assertEquals(1, w.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            }
            warming.close();
        }
    }

    @Test
    void anAttachAsyncADrainGrantedRunsItsFunctionOffTheDrainer() throws Exception {
        CountDownLatch disposing = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        RefPool<String, Object> pool = RefPool.builder((String k) -> new Object())
                .disposer(o -> {
                    disposing.countDown();
                    mayReturn.await(); // the drain holds the one gate meanwhile
                })
                .attachMode(AttachMode.GLOBAL)
                .drainDelay(Duration.ofMillis(10))
                .build();
        pool.attached(() -> pool.acquire("a")).close();
        assertTrue(disposing.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        CompletableFuture<String> ranOn = pool.attachAsync(
                        CancellationToken.none(),
                        attachment -> Thread.currentThread().getName())
                .toCompletableFuture();
        mayReturn.countDown(); // the drain gives the gate up, granting the wait
        String thread = ranOn.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        pool.close();
        assertFalse(thread.startsWith(DRAINER), thread);
    }
}
