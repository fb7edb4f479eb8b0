package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.unstarted;
import static io.refpool.testkit.TestKit.unstartedRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.core.internal.EntrySeams;
import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.sync.CancellationToken;
import io.refpool.testkit.TestKit.Forked;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A waiter in line for capacity and the object of its own key, in the windows where that object
 * changes hands: a revive check holding it, an idle put just done, its disposal just done. The
 * guide's promise: a request in line for a key shares the key's object as soon as the key has one,
 * an object reaching zero goes to a request for its own key before its permit goes to the line, and
 * an acquire fails for capacity only when every object is in use.
 */
class CapacityWaiterRacesTest {
    /** Two permits: "a" held, "x" made then reclaimed for "k"; a waiter for "k" joins meanwhile. */
    private static final class Scene {
        final Engine engine = new Engine();
        final RefPool<String, Session> pool;
        final TestPoolHooks hooks = new TestPoolHooks();
        final AtomicReference<CompletableFuture<Handle<Session>>> waiting = new AtomicReference<>();
        final Forked<Void> waiter;
        final TestPoolHooks.Pause joining;
        final TestPoolHooks.Pause queued;
        Handle<Session> a;
        Handle<Session> k;

        Scene(boolean validated) {
            RefPool.Builder<String, Session> builder =
                    engine.builder().maxObjects(2).idle(cache -> cache.executor(Runnable::run));
            pool = engine.build(validated ? builder.validator((String key, Session s) -> true) : builder);
            pool.core().setHooks(hooks);
            waiter = unstartedRun(
                    "waiter",
                    () -> waiting.set(
                            pool.acquireAsync("k", CancellationToken.none()).toCompletableFuture()));
            joining = hooks.pause(Point.CAPACITY_JOINING, waiter.thread);
            queued = hooks.pause(Point.CAPACITY_QUEUED, waiter.thread);
        }

        /** The waiter found no "k" and no permit and stops before joining the line; then "k" is made. */
        void makeKeyWhileTheWaiterJoins() throws Exception {
            Handle<Session> x;
            try (Attachment attached = pool.attach()) {
                a = pool.acquire("a");
                x = pool.acquire("x");
            }
            waiter.start();
            joining.awaitArrival();
            try (Attachment attached = pool.attach()) {
                x.close();
                k = pool.acquire("k"); // reclaims x; published with nobody in line
            }
        }

        /**
         * {@return "k"'s object, made and idled while the waiter stops before joining the line},
         * the waiter then counted in line and held before it looks at its key
         */
        Session keyIdledBeforeTheWaiterIsCounted() throws Exception {
            makeKeyWhileTheWaiterJoins();
            Session object = k.get();
            pool.runAttached(k::close); // nobody in line yet: "k" idles
            joining.proceed();
            queued.awaitArrival();
            return object;
        }

        /** {@return a thread that acquires "k" attached, stopped once it claimed the idle object for its check} */
        Forked<Handle<Session>> checkerHeldAtItsClaim() throws Exception {
            Forked<Handle<Session>> checker = unstarted("checker", () -> pool.attached(() -> pool.acquire("k")));
            TestPoolHooks.Pause claimed = hooks.pause(Point.REVIVE_CLAIMED, checker.thread);
            checker.start();
            claimed.awaitArrival();
            this.claimed = claimed;
            return checker;
        }

        TestPoolHooks.Pause claimed;

        /** "k" made, and the waiter in line for it and counted, held before it looks at its key. */
        void waiterInLineForK() throws Exception {
            makeKeyWhileTheWaiterJoins();
            joining.proceed();
            queued.awaitArrival();
        }

        /** {@return a thread that closes "k", to stop once its close brought the count to 0 ({@link #zero})} */
        Forked<Void> unstartedReleaserOfK() {
            Forked<Void> releaser = unstartedRun("releaser", () -> pool.runAttached(k::close));
            zero = hooks.pause(Point.REACHED_ZERO, releaser.thread);
            return releaser;
        }

        TestPoolHooks.Pause zero;

        /**
         * The waiter held after joining looks at its key, then the check held at its claim passes:
         * the waiter shares {@code object} while the checker still holds it.
         */
        void waiterLooksThenTheCheckPasses(Forked<Handle<Session>> checker, Session object) throws Exception {
            queued.proceed();
            waiter.join();
            claimed.proceed();
            Handle<Session> checked = checker.join();
            assertSame(object, checked.get());
            Handle<Session> served = served();
            assertSame(object, served.get(), "the waiter shares the checked object");
            closeAll(checked, served);
        }

        Handle<Session> served() throws Exception {
            return waiting.get().get(BOUND.toSeconds(), TimeUnit.SECONDS);
        }

        /** Everything closed: no permit lost, "a", "x" and "k" made once each, each disposed once. */
        void closeAll(Handle<?>... handles) throws Exception {
            for (Handle<?> handle : handles) {
                pool.runAttached(handle::close);
            }
            pool.runAttached(a::close);
            List<String> made = engine.created.stream().map(s -> s.key).toList();
            assertEquals(List.of("a", "x", "k"), made, "no object re-made for the waiter: " + engine.created);
            CapacityTest.assertAllPermitsFree(pool, 2);
            pool.close();
            engine.assertAllDisposedExactlyOnce();
        }
    }

    @Test
    void aWaiterTheReleaserFindsWhileARevivalChecksItsObjectSharesItOnceTheCheckPasses() throws Exception {
        Scene scene = new Scene(true);
        scene.waiterInLineForK();
        Session object = scene.k.get();
        Forked<Void> releaser = scene.unstartedReleaserOfK();
        TestPoolHooks.Pause zero = scene.zero;
        releaser.start();
        zero.awaitArrival(); // count 0, its fate undecided
        Forked<Handle<Session>> checker = scene.checkerHeldAtItsClaim(); // the count is CHECKING now
        zero.proceed();
        releaser.join(); // it looked for the key's waiters while the check held the object

        scene.waiterLooksThenTheCheckPasses(checker, object); // it found the object being checked
    }

    /**
     * The releaser that brought "k" to 0 retains it for the key's waiter while a revive check
     * holds it. Its retain must not leave a stray reference for the check's pass to keep: before,
     * the add of a plain retain landed on the checking count, the pass kept it, and its late
     * take-back brought the object, retired meanwhile, to 0 with nobody to dispose it: its permit
     * was lost. The retain is forced to stop between its add and its take-back, if it makes them.
     */
    @Test
    void aReleaserRetainingAnObjectUnderItsReviveCheckLeavesNoStrayForThePassToKeep() throws Exception {
        Scene scene = new Scene(true);
        scene.waiterInLineForK();
        Session object = scene.k.get();
        Forked<Void> releaser = scene.unstartedReleaserOfK();
        TestPoolHooks.Pause zero = scene.zero;
        CountDownLatch strayAdded = new CountDownLatch(1);
        CountDownLatch takeBack = new CountDownLatch(1);
        EntrySeams.setStrayAdded(() -> {
            if (Thread.currentThread() == releaser.thread) {
                strayAdded.countDown();
                TestKeyedPoolFixtures.awaitLatch(takeBack);
            }
        });
        try {
            releaser.start();
            zero.awaitArrival(); // count 0, its fate undecided
            Forked<Handle<Session>> checker = scene.checkerHeldAtItsClaim(); // the count is CHECKING now
            zero.proceed();
            Awaitility.await("the releaser's retain returns, or stops after its add")
                    .atMost(BOUND)
                    .until(() -> releaser.outcome.isDone() || strayAdded.getCount() == 0);

            scene.queued.proceed();
            scene.waiter.join();
            scene.claimed.proceed(); // the check passes and serves the waiter
            Handle<Session> checked = checker.join();
            Handle<Session> served = scene.served();
            assertSame(object, served.get());
            assertTrue(scene.pool.invalidate("k"), "retired while in use");
            scene.pool.runAttached(checked::close);
            scene.pool.runAttached(served::close); // the last reference: disposed here
        } finally {
            takeBack.countDown();
            EntrySeams.setStrayAdded(null);
        }
        releaser.join();
        assertEquals(1, object.disposals.get(), "the retired object was disposed once its handles closed");
        scene.closeAll();
    }

    @Test
    void aWaiterThatLookedWhileARevivalCheckedItsObjectSharesItOnceTheCheckPasses() throws Exception {
        Scene scene = new Scene(true);
        Session object = scene.keyIdledBeforeTheWaiterIsCounted();
        Forked<Handle<Session>> checker = scene.checkerHeldAtItsClaim();

        scene.waiterLooksThenTheCheckPasses(checker, object); // it found the object being checked, nothing idle
    }

    @Test
    void anObjectIdledJustAsAWaiterForItsKeyJoinsGoesToThatWaiter() throws Exception {
        Scene scene = new Scene(false);
        scene.makeKeyWhileTheWaiterJoins();
        Session object = scene.k.get();

        Forked<Void> releaser = unstartedRun("releaser", () -> scene.pool.runAttached(scene.k::close));
        TestPoolHooks.Pause beforePut = scene.hooks.pause(Point.BEFORE_IDLE_PUT, releaser.thread);
        releaser.start();
        beforePut.awaitArrival(); // saw nobody in line: idles "k"
        scene.joining.proceed();
        scene.queued.awaitArrival(); // in line for "k", counted, not yet looking
        beforePut.proceed();
        releaser.join(); // after its put it sees the line

        scene.queued.proceed();
        scene.waiter.join();
        Handle<Session> served = scene.served();
        assertSame(object, served.get(), "the waiter for k gets k itself, not a re-made k");
        scene.closeAll(served);
    }

    /**
     * The same in a pool that checks revived objects: the waiter cannot take the idle object
     * unchecked when it looks, and it is revived for it through its check instead of being
     * reclaimed for the waiter's own permit and made again.
     */
    @Test
    void anObjectIdledBeforeAWaiterForItsKeyIsCountedGoesToThatWaiterThroughItsCheck() throws Exception {
        Scene scene = new Scene(true);
        Session object = scene.keyIdledBeforeTheWaiterIsCounted();
        scene.queued.proceed();
        scene.waiter.join();
        Handle<Session> served = scene.served();
        assertSame(object, served.get(), "the waiter for k gets k itself, checked, not a re-made k");
        scene.closeAll(served);
    }

    @Test
    void anAcquireOfAKeyWhoseObjectLeftItsSlotFindsThatObjectsPermitFree() throws Exception {
        Engine engine = new Engine();
        RefPool<String, Session> pool = engine.build(
                engine.builder().attachMode(AttachMode.SHARED).maxObjects(1).idle(cache -> cache.maximumSize(10)));
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        pool.runAttached(() -> pool.acquire("k").close()); // "k" idle, holding the one permit

        Forked<Boolean> invalidator = unstarted("invalidator", () -> pool.invalidate("k"));
        TestPoolHooks.Pause freed = hooks.pause(Point.SLOT_FREED, invalidator.thread);
        invalidator.start();
        freed.awaitArrival(); // disposed: its disposer returned, the slot of "k" is empty

        Handle<Session> next = pool.attached(() -> pool.acquire("k")); // nothing in use, nothing idle
        freed.proceed();
        assertTrue(invalidator.join());
        assertEquals(2, engine.created.size(), "a new k");
        pool.runAttached(next::close);
        CapacityTest.assertAllPermitsFree(pool, 1);
        pool.close();
        engine.assertAllDisposedExactlyOnce();
    }
}
