package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A factory never runs while its thread holds a {@code GLOBAL} pool's one gate: the creating thread
 * gives the gate up for the factory and takes it back before the object is published; a warm-up's
 * factory holds no gate in any mode. Each test holds the factory on a latch and, meanwhile, enters
 * from another thread what only a free gate lets in.
 */
class GateFreeFactoryTest {
    private final CountDownLatch inFactory = new CountDownLatch(1);
    private final CountDownLatch finish = new CountDownLatch(1);
    private final AtomicBoolean attachedInFactory = new AtomicBoolean();
    private final AtomicInteger disposals = new AtomicInteger();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private volatile RefPool<String, String> pool;

    /** A pool whose factory waits on {@link #finish} for keys starting with "slow". */
    private RefPool<String, String> pool(AttachMode mode) {
        pool = RefPool.newBuilder()
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(4))
                .disposer((String key, String object, DisposalCause cause) -> disposals.incrementAndGet())
                .build((String key) -> {
                    if (!key.startsWith("slow")) {
                        return "object of " + key;
                    }
                    attachedInFactory.set(pool.isAttached());
                    inFactory.countDown();
                    if (!finish.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                        throw new AssertionError("never let finish");
                    }
                    events.add("factory returned");
                    if (key.startsWith("slow-checked")) {
                        throw new java.io.IOException("no engine for " + key);
                    }
                    return "object of " + key;
                });
        return pool;
    }

    /** While the factory waits on its latch, another thread attaches: the gate is free. */
    private void attachWhileTheFactoryRuns(Forked<?> creator) throws Exception {
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
        try (Attachment other = pool.attach(Duration.ZERO)) {
            assertTrue(pool.isAttached(), "another thread attached while the factory ran");
        } finally {
            finish.countDown();
        }
        creator.join();
        assertFalse(attachedInFactory.get(), "the factory ran with its thread's attachment suspended");
    }

    @Test
    void inGlobalModeTheFactoryRunsWithTheGateGivenUpAndTheCallerIsAttachedAgainAfter() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        Forked<String> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Attachment nested = pool.attach()) {
                try (Handle<String> handle = pool.acquire("slow")) {
                    assertTrue(pool.isAttached(), "attached again, at its depth, once the object is made");
                    return handle.get();
                }
            }
        });
        attachWhileTheFactoryRuns(creator);
        assertEquals("object of slow", creator.join());
        assertEquals(1L, pool.stats().creations());
        pool.close();
        assertEquals(1, disposals.get());
    }

    @Test
    void aCheckedFailureOfAGateFreeFactoryReachesTheCallerAttached() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        Forked<Boolean> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach()) {
                ObjectCreationException failed =
                        assertThrows(ObjectCreationException.class, () -> pool.acquire("slow-checked"));
                assertInstanceOf(java.io.IOException.class, failed.getCause());
                return pool.isAttached();
            }
        });
        attachWhileTheFactoryRuns(creator);
        assertTrue(creator.join(), "still attached after the failure");
        assertEquals(0L, pool.stats().live());
        pool.close();
        assertEquals(0, disposals.get());
    }

    @Test
    void inGlobalModeAWarmUpRunsItsFactoryWithTheGateGivenUp() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        CompletionStage<Integer> warmed = pool.warmUp(List.of("slow"), CancellationToken.none());
        Forked<Integer> creator =
                fork("warm-up", () -> warmed.toCompletableFuture().get());
        attachWhileTheFactoryRuns(creator);
        assertEquals(1, creator.join());
        assertEquals(1L, pool.stats().idle());
        pool.close();
        assertEquals(1, disposals.get());
    }

    @Test
    void inTheSharedModesAWarmUpHoldsNoGateSoTheWorldCanStopMeanwhile() throws Exception {
        for (AttachMode mode : new AttachMode[] {AttachMode.SHARED, AttachMode.PER_OBJECT}) {
            GateFreeFactoryTest run = new GateFreeFactoryTest();
            RefPool<String, String> pool = run.pool(mode);
            CompletionStage<Integer> warmed = pool.warmUp(List.of("slow"), CancellationToken.none());
            assertTrue(run.inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
            try (Attachment world = pool.stopTheWorld(Duration.ZERO)) { // waits for every attached thread
                assertTrue(pool.isAttached(), mode + ": the world stopped while the warm-up's factory ran");
            } finally {
                run.finish.countDown();
            }
            assertEquals(1, warmed.toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS));
            assertFalse(run.attachedInFactory.get(), mode + ": the warm-up's factory ran unattached");
            pool.close();
            assertEquals(1, run.disposals.get());
        }
    }

    @Test
    void inTheSharedModesAnAcquiresFactoryRunsAttachedBecauseItsHoldLetsOthersIn() throws Exception {
        for (AttachMode mode : new AttachMode[] {AttachMode.SHARED, AttachMode.PER_OBJECT}) {
            GateFreeFactoryTest run = new GateFreeFactoryTest();
            RefPool<String, String> pool = run.pool(mode);
            Forked<String> creator = fork("creator", () -> pool.call("slow", object -> object));
            assertTrue(run.inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
            try (Attachment other = pool.attach(Duration.ZERO)) {
                assertTrue(pool.isAttached(), mode + ": another thread attached while the factory ran");
            } finally {
                run.finish.countDown();
            }
            assertEquals("object of slow", creator.join());
            assertTrue(run.attachedInFactory.get(), mode + ": the factory ran attached");
            pool.close();
        }
    }

    @Test
    void aStopTheWorldKeepsTheGateWhileItsFactoryRuns() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        Forked<String> creator = fork("creator", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return pool.call("slow", object -> object);
            }
        });
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
        try {
            assertThrows(WaitTimeoutException.class, () -> pool.attach(Duration.ZERO), "nobody else gets in");
        } finally {
            finish.countDown();
        }
        assertEquals("object of slow", creator.join());
        assertTrue(attachedInFactory.get(), "the factory ran in the stopped world");
        pool.close();
    }

    @Test
    void aStopTheWorldNestedInAnAttachmentKeepsTheGateWhileItsFactoryRunsAndOnlyUntilItCloses() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        Forked<Boolean> creator = fork("creator", () -> {
            try (Attachment outer = pool.attach()) {
                try (Attachment world = pool.stopTheWorld()) {
                    pool.call("slow", object -> object);
                }
                boolean inTheStoppedWorld = attachedInFactory.get();
                pool.call("slow-again", object -> object); // a plain level again: the gate is given up
                return inTheStoppedWorld;
            }
        });
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
        try {
            assertThrows(WaitTimeoutException.class, () -> pool.attach(Duration.ZERO), "nobody else gets in");
        } finally {
            finish.countDown();
        }
        assertTrue(creator.join(), "the first factory ran in the stopped world");
        assertFalse(attachedInFactory.get(), "the second factory ran with the gate given up");
        pool.close();
    }

    @Test
    void aStopTheWorldLeftOpenInAClosureEndsWithItAndTheAttachmentGivesTheGateUpAgain() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        Forked<String> creator = fork("creator", () -> {
            try (Attachment outer = pool.attach()) {
                pool.attached(pool::stopTheWorld); // left open: it ends with the closure
                return pool.call("slow", object -> object);
            }
        });
        attachWhileTheFactoryRuns(creator);
        pool.close();
    }

    @Test
    void anAttachAsyncGrantedWhenAFactoryGivesTheGateUpRunsOnAThreadOfItsOwnNotBeforeThatFactory() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        finish.countDown(); // the factory returns at once
        CountDownLatch attached = new CountDownLatch(1);
        CountDownLatch queued = new CountDownLatch(1);
        Forked<String> creator = fork("creator", () -> {
            try (Attachment outer = pool.attach()) {
                attached.countDown();
                assertTrue(queued.await(BOUND.toSeconds(), TimeUnit.SECONDS));
                return pool.call("slow", object -> object); // gives the gate up for the factory
            }
        });
        assertTrue(attached.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CompletionStage<String> async = pool.attachAsync(CancellationToken.none(), attachment -> {
            ranOn.set(Thread.currentThread());
            return pool.call("slow", object -> object); // the creator's object: waits for its factory
        });
        queued.countDown(); // the async attach waits in line for the gate the creator holds
        assertEquals("object of slow", creator.join());
        assertEquals("object of slow", async.toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertTrue(ranOn.get() != creator.thread, "the function did not run on the thread that gave the gate up");
        pool.close();
    }

    @Test
    void aFactoryThatClosesThePoolWhileAnotherThreadClosesItReturnsAndBothClosesEnd() throws Exception {
        AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();
        CountDownLatch factoryStarted = new CountDownLatch(1);
        CompletableFuture<Void> factoryCloseReturned = new CompletableFuture<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> {
                    factoryStarted.countDown();
                    RefPool<String, Object> p = self.get();
                    eventually().until(p::isClosed); // the other thread's close is under way
                    p.close(); // that close waits for this creation: this one must not wait for it
                    factoryCloseReturned.complete(null);
                    return new Object();
                })
                .attachMode(AttachMode.GLOBAL)
                .build();
        self.set(pool);
        Forked<Void> acquirer = fork("acquirer", () -> {
            try (Attachment attached = pool.attach()) {
                pool.acquire("k").close();
            } catch (PoolClosedException closedMeanwhile) {
                // the pool closed while the object was made
            }
            return null;
        });
        assertTrue(factoryStarted.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        Forked<Void> closer = fork("closer", () -> {
            pool.close();
            return null;
        });
        factoryCloseReturned.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        closer.join();
        acquirer.join();
        assertTrue(pool.isClosed());
    }

    @Test
    void closeWaitsForACreationWhoseFactoryGaveTheGateUp() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        Forked<String> creator = fork("creator", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> handle = pool.acquire("slow")) {
                return handle.get();
            } catch (PoolClosedException closed) {
                return "refused";
            }
        });
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
        Forked<Void> closer = forkRun("closer", () -> {
            pool.close();
            events.add("close returned");
        });
        // the closer either waits for the creation or (the defect) returns without it
        eventually()
                .alias("close waits or returns")
                .until(() ->
                        closer.outcome.isDone() || closer.thread.getState() == Thread.State.WAITING && pool.isClosed());
        finish.countDown();
        closer.join();
        assertEquals("object of slow", creator.join(), "a creation begun before the close is published");
        assertEquals(List.of("factory returned", "close returned"), events);
        assertEquals(1, disposals.get(), "disposed once, by the close");
        assertEquals(1L, pool.stats().disposals());
    }

    @Test
    void inGlobalModeASectionIsWaitedForWithTheGateGivenUpSoAHolderThatCreatesFinishes() throws Exception {
        RefPool<String, String> pool = pool(AttachMode.GLOBAL);
        CountDownLatch holding = new CountDownLatch(1);
        Forked<String> holder = fork("holder", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> a = pool.acquire("a");
                    Guard section = a.section()) {
                holding.countDown();
                try (Handle<String> slow = pool.acquire("slow")) { // its factory gives the gate up
                    return slow.get();
                }
            }
        });
        assertTrue(holding.await(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertTrue(inFactory.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the factory ran");
        Forked<String> waiter = fork("waiter", () -> {
            try (Attachment attached = pool.attach();
                    Handle<String> a = pool.acquire("a");
                    Guard section = a.section()) { // held by the holder, which needs the gate back
                return a.get();
            }
        });
        awaitParked(waiter.thread);
        finish.countDown();
        assertEquals("object of slow", holder.join());
        assertEquals("object of a", waiter.join());
        pool.close();
        assertEquals(2, disposals.get());
    }

    /**
     * The attachment a {@code GLOBAL} factory's caller holds is suspended while the factory runs:
     * closing it from the factory throws, saying why, and the caller is attached again after.
     */
    @Test
    void aGlobalFactoryCannotCloseItsCallersAttachment() {
        AtomicReference<Attachment> caller = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        RefPool<String, String> pool = RefPool.newBuilder()
                .attachMode(AttachMode.GLOBAL)
                .build((String key) -> {
                    try {
                        caller.get().close();
                    } catch (RuntimeException e) {
                        thrown.set(e);
                    }
                    return "object of " + key;
                });
        try (Attachment attached = pool.attach()) {
            caller.set(attached);
            try (Handle<String> handle = pool.acquire("k")) {
                assertEquals("object of k", handle.get());
            }
            assertInstanceOf(IllegalStateException.class, thrown.get());
            assertTrue(
                    thrown.get().getMessage().contains("factory"), thrown.get().getMessage());
            assertTrue(pool.isAttached(), "the caller's attachment is open after the acquire");
        }
        assertFalse(pool.isAttached());
        pool.close();
    }
}
