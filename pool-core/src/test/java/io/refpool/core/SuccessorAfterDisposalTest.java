package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A key's next object is created only after its predecessor's disposer has returned, so a host
 * that saves a tenant's state in the disposer and restores it in the factory loses nothing across
 * idle expiry, {@code clearIdle} and {@code invalidate}. Same-key acquirers wait for the disposal;
 * other keys are not held up.
 */
class SuccessorAfterDisposalTest {
    /** A tenant's engine: a counter whose value the host saves on disposal and restores on creation. */
    static final class Tenant {
        final String key;
        int counter;
        final AtomicInteger disposals = new AtomicInteger();

        Tenant(String key, int counter) {
            this.key = key;
            this.counter = counter;
        }
    }

    /** The host: its saved state, and a hook each disposal runs before it saves. */
    static final class Host {
        final Map<String, Integer> saved = new ConcurrentHashMap<>();
        final List<Tenant> created = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> alive = new ConcurrentHashMap<>();
        volatile Consumer<Tenant> beforeSave = tenant -> {};

        RefPool<String, Tenant> pool(AttachMode mode) {
            return RefPool.builder((String key) -> {
                        if (alive.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() != 1) {
                            violations.add(key + " created while its predecessor was not yet disposed");
                        }
                        Tenant tenant = new Tenant(key, saved.getOrDefault(key, 0)); // restore
                        created.add(tenant);
                        return tenant;
                    })
                    .disposer((key, tenant, cause) -> {
                        beforeSave.accept(tenant);
                        saved.put(key, tenant.counter); // save
                        tenant.disposals.incrementAndGet();
                        alive.get(key).decrementAndGet();
                    })
                    .attachMode(mode)
                    .idle(cache -> cache.maximumSize(16))
                    .build();
        }
    }

    private static void await(CountDownLatch latch) {
        TestKeyedPoolFixtures.awaitLatch(latch);
    }

    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void anAcquireWaitsForTheDisposerOfItsKeysIdleObjectAndOtherKeysDoNot(AttachMode mode) throws Exception {
        Host host = new Host();
        RefPool<String, Tenant> pool = host.pool(mode);
        pool.call("a", t -> ++t.counter); // 1, idle now
        CountDownLatch saving = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        host.beforeSave = tenant -> {
            if (tenant.key.equals("a")) {
                saving.countDown();
                await(finish);
            }
        };
        TestKit.Forked<Integer> clearer = fork("clearer", pool::clearIdle);
        await(saving); // a's disposer runs and has not saved yet

        TestKit.Forked<Integer> sync = fork("sync", () -> pool.call("a", t -> ++t.counter));
        CompletableFuture<Integer> async =
                pool.callAsync("a", CancellationToken.none(), t -> ++t.counter).toCompletableFuture();
        awaitParked(sync.thread);
        assertFalse(async.isDone(), "the async acquire waits too, without a thread");
        assertEquals(1, host.created.size(), "no successor while the predecessor's disposer runs");
        assertEquals(1, (int) pool.call("b", t -> ++t.counter), "another key is not held up");

        finish.countDown();
        assertEquals(1, clearer.join());
        int first = sync.join();
        int second = async.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        assertEquals(5, first + second, "the successor restored 1, and both increments were applied: 2 and 3");
        pool.close();
        assertEquals(List.of(), host.violations);
        assertEquals(3, host.saved.get("a"));
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void invalidateOfAnIdleObjectMakesTheNextAcquireWaitForItsDisposer(AttachMode mode) throws Exception {
        Host host = new Host();
        RefPool<String, Tenant> pool = host.pool(mode);
        pool.call("a", t -> ++t.counter);
        CountDownLatch saving = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        host.beforeSave = tenant -> {
            saving.countDown();
            await(finish);
        };
        TestKit.Forked<Boolean> invalidator = fork("invalidator", () -> pool.invalidate("a"));
        await(saving);
        CompletableFuture<Integer> next =
                pool.callAsync("a", CancellationToken.none(), t -> ++t.counter).toCompletableFuture();
        assertFalse(next.isDone());
        assertEquals(1, host.created.size());
        finish.countDown();
        assertTrue(invalidator.join());
        assertEquals(2, next.get(BOUND.toSeconds(), TimeUnit.SECONDS), "restored 1, then incremented");
        pool.close();
        assertEquals(List.of(), host.violations);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aDisposerThatAcquiresItsOwnKeyIsRefusedInsteadOfWaitingForItself(AttachMode mode) throws Exception {
        Host host = new Host();
        RefPool<String, Tenant> pool = host.pool(mode);
        List<Throwable> refused = new CopyOnWriteArrayList<>();
        pool.call("a", t -> ++t.counter);
        host.beforeSave = tenant -> {
            try {
                pool.call("a", t -> t.counter);
            } catch (IllegalStateException e) {
                refused.add(e);
            }
        };
        forkRun("clearer", pool::clearIdle).join();
        assertEquals(1, refused.size());
        assertTrue(
                refused.get(0).getMessage().contains("disposing"),
                refused.get(0).getMessage());
        assertEquals(1, (int) pool.call("a", t -> t.counter), "the next acquire restored the saved state");
        pool.close();
    }

    /**
     * The save/restore pattern under load: increments through {@code call} while another thread
     * clears the idle cache, objects expire and the cache's size bound evicts; no increment is lost.
     * (An object invalidated while in use is replaced at once, so its later state is not its
     * successor's: invalidate is for an object whose state is not worth keeping.)
     */
    @ParameterizedTest
    @EnumSource(
            value = AttachMode.class,
            names = {"SHARED", "PER_OBJECT"})
    void saveInTheDisposerRestoreInTheFactoryLosesNoUpdate(AttachMode mode) throws Exception {
        Host host = new Host();
        RefPool<String, Tenant> pool = RefPool.builder((String key) -> {
                    if (host.alive
                                    .computeIfAbsent(key, k -> new AtomicInteger())
                                    .incrementAndGet()
                            != 1) {
                        host.violations.add(key + " created while its predecessor was not yet disposed");
                    }
                    return new Tenant(key, host.saved.getOrDefault(key, 0));
                })
                .disposer((key, tenant, cause) -> {
                    for (int i = 0; i < 200; i++) {
                        Thread.onSpinWait(); // a disposer that takes a while
                    }
                    host.saved.put(key, tenant.counter);
                    host.alive.get(key).decrementAndGet();
                })
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(2).expireAfterAccess(Duration.ofMillis(1)))
                .build();
        int perThread = 400;
        String[] keys = {"t0", "t1", "t2"};
        TestKit.Forked<Void> churn = forkRun("churn", () -> {
            for (int i = 0; i < 400; i++) {
                pool.clearIdle();
            }
        });
        List<TestKit.Forked<Void>> workers = new java.util.ArrayList<>();
        for (int w = 0; w < 2; w++) {
            workers.add(forkRun("worker-" + w, () -> {
                for (int i = 0; i < perThread; i++) {
                    String key = keys[i % keys.length];
                    if (mode == AttachMode.PER_OBJECT) {
                        pool.call(key, t -> ++t.counter);
                    } else {
                        pool.call(key, t -> {
                            synchronized (t) {
                                return ++t.counter;
                            }
                        });
                    }
                }
            }));
        }
        for (TestKit.Forked<Void> worker : workers) {
            worker.join();
        }
        churn.join();
        pool.close();
        int total = 0;
        for (String key : keys) {
            total += host.saved.getOrDefault(key, 0);
        }
        assertEquals(2 * perThread, total, "every increment reached the saved state");
        assertEquals(List.of(), host.violations);
    }
}
