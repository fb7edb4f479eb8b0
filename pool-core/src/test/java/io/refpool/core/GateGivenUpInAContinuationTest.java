package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * In {@code GLOBAL} mode an {@code attachAsync} function runs on the thread whose release granted
 * it, inside that thread's continuation, where the completions its own releases cause wait until
 * it returns. When such a function gives the gate up ({@code detached()}, a factory, a wait for a
 * section) and then blocks, the next waiter owns the gate: it is told before the thread blocks, so
 * it runs and lets the gate go, rather than owning it unseen for as long as the thread blocks.
 */
class GateGivenUpInAContinuationTest {
    private final TestResources resources = new TestResources();

    @Test
    void aWaiterGrantedTheGateInsideAContinuationRunsBeforeThatThreadBlocks() throws Exception {
        RefPool<String, Resource> pool = resources.build(resources.builder().attachMode(AttachMode.GLOBAL));
        CountDownLatch letGo = new CountDownLatch(1);
        TestKit.Forked<Void> holder = TestKeyedPoolFixtures.attachedUntil(
                pool, letGo); // its close grants "first", which runs there, inside its continuation

        CompletableFuture<Void> elsewhere = new CompletableFuture<>();
        CountDownLatch blocking = new CountDownLatch(1);
        CompletableFuture<String> first = pool.attachAsync(
                        CancellationToken.none(),
                        attachment -> attachment.detached(() -> {
                            blocking.countDown();
                            elsewhere.join(); // blocks outside the gate's queue, the gate given up
                            return "first";
                        }))
                .toCompletableFuture();
        CompletableFuture<Integer> second =
                pool.attachAsync(CancellationToken.none(), attachment -> 2).toCompletableFuture();
        eventually().until(() -> pool.core().gateQueueLength() == 2);

        letGo.countDown();
        TestKeyedPoolFixtures.awaitLatch(blocking);
        awaitParked(holder.thread);
        try (Attachment attached = pool.attach(Duration.ofSeconds(2))) { // the gate is free again
            elsewhere.complete(null);
        } finally {
            elsewhere.complete(null);
        }
        holder.join();
        assertEquals("first", first.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertEquals(2, second.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    /**
     * A drain waiting at the gate is granted it by a thread giving the gate up for its factory. It
     * runs on a drainer thread, not first on that thread, inside the creation it interrupts: there
     * its disposers would delay the factory, and one that acquired the key being created would be
     * told it waits for itself.
     */
    @Test
    void aDrainGrantedTheGateByAThreadGivingItUpForItsFactoryRunsElsewhere() throws Exception {
        java.util.List<String> disposedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        RefPool<String, String> pool = RefPool.newBuilder()
                .attachMode(AttachMode.GLOBAL)
                .drainThreshold(1) // a release off the attachment drains at once, on the executor
                .executor(Runnable::run) // here: the closing thread, which finds the gate held
                .drainDelay(Duration.ofHours(1))
                .disposer((String key, String object, DisposalCause cause) ->
                        disposedOn.add(key + " on " + Thread.currentThread().getName()))
                .build((String key) -> "object of " + key);
        Handle<String> x = pool.attached(() -> pool.acquire("x"));
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch create = new CountDownLatch(1);
        TestKit.Forked<Void> creator = forkRun("creator", () -> {
            try (Attachment attached = pool.attach()) {
                holding.countDown();
                TestKeyedPoolFixtures.awaitLatch(create);
                pool.acquire("y").close(); // gives the gate up for the factory: the drain is granted
            }
        });
        TestKeyedPoolFixtures.awaitLatch(holding);
        forkRun("closer", x::close).join(); // its drain waits at the gate
        eventually().until(() -> pool.core().gateQueueLength() == 1);

        create.countDown();
        creator.join();
        eventually().until(() -> disposedOn.stream().anyMatch(d -> d.startsWith("x on ")));
        assertFalse(disposedOn.contains("x on creator"), "x disposed inside the creation: " + disposedOn);
        pool.close();
    }
}
