package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Per-object sections ({@link Handle#section()}), {@link AttachMode#PER_OBJECT} and the closure
 * API: who may be in an object, in what order waiters get in, what a failed or cancelled wait
 * leaves behind (nothing), and that two objects taken together never deadlock.
 */
class PerObjectSectionTest {
    /** A non-thread-safe engine object: a plain counter, and how often it was disposed. */
    static final class Box {
        final String key;
        int value; // deliberately not atomic: only a section makes its updates safe
        final AtomicInteger disposals = new AtomicInteger();

        Box(String key) {
            this.key = key;
        }
    }

    private final List<Box> created = new CopyOnWriteArrayList<>();
    private final List<RefPool<String, Box>> pools = new ArrayList<>();

    /** A pool whose objects idle in a cache between uses, so their state carries over. */
    private RefPool<String, Box> pool(AttachMode mode, boolean strict) {
        return pool(mode, strict, true);
    }

    private RefPool<String, Box> pool(AttachMode mode, boolean strict, boolean idleCache) {
        RefPool.Builder<String, Box> builder = RefPool.builder((String key) -> {
                    Box box = new Box(key);
                    created.add(box);
                    return box;
                })
                .disposer(box -> box.disposals.incrementAndGet())
                .attachMode(mode)
                .strictAccess(strict);
        if (idleCache) {
            builder.idle(cache -> cache.maximumSize(10));
        }
        RefPool<String, Box> pool = builder.build();
        pools.add(pool);
        return pool;
    }

    @AfterEach
    void everyObjectDisposedExactlyOnce() {
        pools.forEach(RefPool::close);
        for (Box box : created) {
            assertEquals(1, box.disposals.get(), box.key + " disposed exactly once");
        }
    }

    private static Handle<Box> acquire(RefPool<String, Box> pool, String key) {
        return pool.attached(() -> pool.acquire(key));
    }

    // ---------------------------------------------------------------- who is in an object

    @Test
    void allHandlesToOneObjectShareOneSectionAndDifferentObjectsNeverContend() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.SHARED, false);
        Handle<Box> a = acquire(pool, "a");
        Handle<Box> sameObject = acquire(pool, "a");
        Handle<Box> shared = a.share();
        Handle<Box> b = acquire(pool, "b");
        try (Attachment attached = pool.attach();
                Guard held = a.section()) {
            CompletableFuture<Guard> viaOtherHandle = fork("other", () -> sameObject
                            .sectionAsync(CancellationToken.none())
                            .toCompletableFuture())
                    .join();
            CompletableFuture<Guard> viaShare = fork("share", () -> shared.sectionAsync(CancellationToken.none())
                            .toCompletableFuture())
                    .join();
            assertFalse(viaOtherHandle.isDone(), "a second handle to the object waits for its section");
            assertFalse(viaShare.isDone(), "a shared handle waits too");
            try (Guard other = fork("b", () -> pool.attached(b::section)).join()) {
                assertTrue(other != null, "another object's section is free");
            }
            held.close();
            viaOtherHandle.get(BOUND.toSeconds(), TimeUnit.SECONDS).close();
            viaShare.get(BOUND.toSeconds(), TimeUnit.SECONDS).close();
        }
        a.close();
        sameObject.close();
        shared.close();
        b.close();
    }

    @Test
    void sectionWaitersGetInFirstComeFirstServed() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        Handle<Box> handle = acquire(pool, "a");
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<TestKit.Forked<Void>> waiters = new ArrayList<>();
        Guard held = pool.attached(handle::section);
        for (int i = 0; i < 5; i++) {
            int n = i;
            TestKit.Forked<Void> waiter = forkRun("waiter-" + n, () -> {
                try (Attachment attached = pool.attach();
                        Guard section = handle.section()) {
                    order.add(n);
                }
            });
            awaitParked(waiter.thread); // queued before the next one starts
            waiters.add(waiter);
        }
        held.close();
        for (TestKit.Forked<Void> waiter : waiters) {
            waiter.join();
        }
        assertEquals(List.of(0, 1, 2, 3, 4), order);
        handle.close();
    }

    /** A refusal of a second hold names what was called (not always {@code section()}), the key and the pool. */
    private static void assertRefusalNames(String what, IllegalStateException refused) {
        String message = refused.getMessage();
        assertTrue(message.startsWith(what + " on the object of key 'a' in pool '"), message);
    }

    @Test
    void askingForASectionThisThreadHoldsThrowsInsteadOfDeadlocking() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        Handle<Box> handle = acquire(pool, "a");
        Handle<Box> other = handle.share();
        Attachment attached = pool.attach(); // sections are taken attached
        try (Guard held = handle.section()) {
            IllegalStateException again = assertThrows(IllegalStateException.class, handle::section);
            assertTrue(again.getMessage().contains("already holds its section"), again.getMessage());
            assertRefusalNames("section()", again);
            assertThrows(IllegalStateException.class, other::section, "through any handle to the object");
            CompletableFuture<Guard> async =
                    other.sectionAsync(CancellationToken.none()).toCompletableFuture();
            assertRefusalNames(
                    "sectionAsync()",
                    assertInstanceOf(IllegalStateException.class, failureOf(async), "the async form fails its stage"));
            assertRefusalNames(
                    "a call",
                    assertThrows(
                            IllegalStateException.class,
                            () -> pool.call("a", box -> box.value),
                            "call for the object whose section the thread holds"));
            assertRefusalNames("a call", assertThrows(IllegalStateException.class, () -> other.call(box -> box.value)));
        }
        try (Guard again = handle.section()) {
            assertTrue(again != null, "released, the section is free again, and nothing was leaked");
        }
        attached.close();
        handle.close();
        other.close();
    }

    @Test
    void closingTheHandleWhileItsSectionIsHeldKeepsTheObjectUntilTheGuardCloses() {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false, false);
        pool.attached(() -> {
            Handle<Box> handle = pool.acquire("a");
            Box box = handle.get();
            Guard section = handle.section();
            handle.close();
            assertEquals(0, box.disposals.get(), "the guard holds a reference of its own");
            assertThrows(IllegalStateException.class, handle::section, "a closed handle takes no section");
            section.close();
            assertEquals(1, box.disposals.get(), "the guard's close released the last reference");
            section.close(); // a second close does nothing
            assertEquals(1, box.disposals.get());
            return null;
        });
    }

    // ---------------------------------------------------------------- cancellation

    @Test
    void aCancelledOrTimedOutSectionWaiterLosesNoOwnership() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        Handle<Box> handle = acquire(pool, "a");
        Handle<Box> waiterHandle = handle.share();
        int rounds = 1_000;
        try (SpinRacer racer = new SpinRacer()) {
            TestKit.raceBothWays("cancel", rounds, (round, run) -> {
                Guard held = asyncHold(handle);
                CancellationSource source = new CancellationSource();
                CompletableFuture<Guard> waiter =
                        waiterHandle.sectionAsync(source.token()).toCompletableFuture();
                assertFalse(waiter.isDone());
                long delay = (round % 50) * (200L << run); // sweeps the release across the cancel
                racer.race(held::close, source::cancel, round % 2 == 0 ? delay : -delay);
                return settle(waiter, handle, "cancel, round " + round);
            });
            TestKit.raceBothWays("timeout", rounds, (round, run) -> {
                Guard held = asyncHold(handle);
                CompletableFuture<Guard> waiter =
                        waiterHandle.sectionAsync(CancellationToken.none()).toCompletableFuture();
                waiter.orTimeout(100, TimeUnit.MICROSECONDS);
                spin((round % 50) * (40_000L << run)); // from at once to far past the timeout (2 ms and more)
                held.close();
                TestKit.eventually().until(waiter::isDone);
                return settle(waiter, handle, "timeout, round " + round);
            });
        }
        waiterHandle.close();
        handle.close();
        assertEquals(0, pool.attached(() -> pool.stats().live()), "every reference the sections took was given back");
    }

    /** {@return the section, held by no thread in particular, so this thread may queue for it too} */
    private static Guard asyncHold(Handle<Box> handle) {
        return handle.sectionAsync(CancellationToken.none())
                .toCompletableFuture()
                .join();
    }

    /** {@return whether the waiter was granted}; either way the section ends free and usable. */
    private static boolean settle(CompletableFuture<Guard> waiter, Handle<Box> handle, String where) throws Exception {
        boolean granted = false;
        if (waiter.isCompletedExceptionally()) {
            Throwable failure = unwrap(failureOf(waiter));
            assertTrue(
                    failure instanceof CancellationException || failure instanceof TimeoutException,
                    where + ": " + failure);
        } else {
            waiter.join().close();
            granted = true;
        }
        CompletableFuture<Guard> free = fork("probe", () -> handle.sectionAsync(CancellationToken.none())
                        .toCompletableFuture())
                .join();
        assertTrue(free.isDone() && !free.isCompletedExceptionally(), where + ": the section ends free");
        free.join().close();
        return granted;
    }

    // ---------------------------------------------------------------- the closure API

    @Test
    void callReleasesSectionHandleAndAttachmentWhenTheFunctionThrows() {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true, false);
        IllegalArgumentException thrown = new IllegalArgumentException("plugin failed");
        IllegalArgumentException seen = assertThrows(
                IllegalArgumentException.class,
                () -> pool.call("a", box -> {
                    box.value++;
                    throw thrown;
                }));
        assertSame(thrown, seen, "the function's exception reaches the caller unchanged");
        assertFalse(pool.isAttached(), "the attachment was closed");
        assertEquals(1, created.get(0).disposals.get(), "the handle was closed: its object went at count zero");
        assertEquals(1, pool.<Integer, RuntimeException>call("a", box -> ++box.value), "a new object, section free");
        assertSame(
                thrown,
                assertThrows(
                        IllegalArgumentException.class,
                        () -> pool.call("a", "b", (a, b) -> {
                            throw thrown;
                        })));
        assertFalse(pool.isAttached());
        assertEquals(0, pool.attached(() -> pool.stats().live()), "both handles and sections were released");
    }

    @Test
    void callNestsForAnotherKeyAndTwoKeyCallTakesBothSections() {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        int sum = pool.call("a", a -> {
            a.value = 1;
            return a.value + pool.call("b", b -> b.value = 2);
        });
        assertEquals(3, sum);
        assertEquals(4, pool.<Integer, RuntimeException>call("a", "b", (a, b) -> a.value + b.value + 1));
        assertEquals(2, pool.<Integer, RuntimeException>call("a", "a", (x, y) -> {
            assertSame(x, y, "one key named twice is one object");
            return x.value + 1;
        }));
    }

    @Test
    void aClosureHasNoScopeObjectYetNestsWithAttachmentsAndEndsWhatItsWorkLeftOpen() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        try (Attachment outer = pool.attach()) {
            int value = pool.attached(() -> {
                try (Attachment inner = pool.attach()) { // the level above the closure's
                    assertThrows(IllegalStateException.class, outer::close, "outer is not innermost");
                    return inner.detached(() -> pool.isAttached() ? -1 : 1);
                }
            });
            assertEquals(1, value, "detached() inside the closure suspended every level");
            assertTrue(pool.isAttached(), "the closure left the outer attachment open");
        }
        assertFalse(pool.isAttached());

        pool.attached(() -> pool.attach()); // work that leaves an attachment open: it ends with the closure
        assertFalse(pool.isAttached(), "the closure detached the thread");
        TestKit.Forked<Integer> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return 1;
            }
        });
        assertEquals(1, stopper.join(), "the gate was left: stop-the-world gets in");
        pool.call("a", a -> pool.attach());
        assertFalse(pool.isAttached());
        try (Attachment again = pool.attach()) {
            assertTrue(pool.isAttached(), "a later attach opens a fresh level");
        }
    }

    @Test
    void aSectionHolderMayNotDetachSoItNeverQueuesBehindAStopTheWorldThatWaitsForIt() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch mayDetach = new CountDownLatch(1);
        TestKit.Forked<String> holder = fork("holder", () -> {
            try (Attachment mine = pool.attach();
                    Handle<Box> handle = pool.acquire("a");
                    Guard held = handle.section()) {
                holding.countDown();
                assertTrue(mayDetach.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                try {
                    return mine.detached(() -> "detached");
                } catch (IllegalStateException refused) {
                    return refused.getMessage();
                }
            }
        });
        assertTrue(holding.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        TestKit.Forked<Integer> reader = fork("reader", () -> pool.call("a", a -> ++a.value));
        awaitParked(reader.thread); // attached, waiting for the section
        TestKit.Forked<Integer> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return 1;
            }
        });
        awaitParked(stopper.thread); // waiting for the reader to leave
        mayDetach.countDown(); // detached() would give the gate up and take it back behind the stopper

        String outcome = holder.join();
        assertTrue(outcome.contains("holds the section of the object of key 'a'"), outcome);
        assertEquals(1, reader.join());
        assertEquals(1, stopper.join());
        try (Attachment mine = pool.attach()) {
            assertEquals("detached", mine.detached(() -> "detached"), "no section held: detached() runs");
            assertThrows(IllegalStateException.class, () -> pool.call("a", a -> mine.detached(() -> a)));
        }
    }

    @Test
    void aSectionHolderWaitingForAnotherThreadsCreationKeepsTheGateSoAStopTheWorldCannotCutIn() throws Exception {
        CountDownLatch creatingB = new CountDownLatch(1);
        CountDownLatch finishB = new CountDownLatch(1);
        RefPool<String, Box> pool = RefPool.builder((String key) -> {
                    if (key.equals("b")) {
                        creatingB.countDown();
                        assertTrue(finishB.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                    }
                    Box box = new Box(key);
                    created.add(box);
                    return box;
                })
                .disposer(box -> box.disposals.incrementAndGet())
                .attachMode(AttachMode.PER_OBJECT)
                .build();
        pools.add(pool);
        TestKit.Forked<Box> creator = fork("creator", () -> pool.call("b", b -> b));
        assertTrue(creatingB.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        TestKit.Forked<Box> holder = fork("holder", () -> pool.call("a", a -> pool.call("b", b -> b)));
        awaitParked(holder.thread); // in a's section, waiting for b's creation
        TestKit.Forked<Box> reader = fork("reader", () -> pool.call("a", a -> a));
        awaitParked(reader.thread); // attached, waiting for a's section
        TestKit.Forked<Integer> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld()) {
                return 1;
            }
        });
        awaitParked(stopper.thread); // waiting for the creator, the holder and the reader to leave
        finishB.countDown(); // had the holder given the gate up, it would queue behind the stopper

        assertEquals("b", creator.join().key);
        assertEquals("b", holder.join().key);
        reader.join();
        assertEquals(1, stopper.join());
    }

    @Test
    void aTimedAcquireOrCallIsRefusedToASectionHolderItWouldGiveTheGateUp() {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        IllegalStateException refused = assertThrows(
                IllegalStateException.class,
                () -> pool.call("a", a -> pool.acquire("b", java.time.Duration.ofSeconds(1))));
        assertTrue(
                refused.getMessage().startsWith("acquire('b', PT1S) while this thread holds the section"),
                refused.getMessage());
        IllegalStateException call = assertThrows(
                IllegalStateException.class,
                () -> pool.call("a", a -> pool.call("b", java.time.Duration.ofSeconds(1), b -> b)));
        assertTrue(
                call.getMessage().startsWith("call('b', PT1S) while this thread holds the section"),
                "the refusal names the call made: " + call.getMessage());
    }

    @Test
    void twoKeyCallsNamingTheKeysInOppositeOrdersNeverDeadlock() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        int calls = 10_000;
        TestKit.Forked<Void> forward = forkRun("a-then-b", () -> {
            for (int i = 0; i < calls; i++) {
                pool.call("a", "b", (a, b) -> {
                    a.value++;
                    b.value++;
                    return null;
                });
            }
        });
        TestKit.Forked<Void> backward = forkRun("b-then-a", () -> {
            for (int i = 0; i < calls; i++) {
                pool.call("b", "a", (b, a) -> {
                    a.value++;
                    b.value++;
                    return null;
                });
            }
        });
        forward.join();
        backward.join();
        assertEquals(
                2 * calls,
                pool.<Integer, RuntimeException>call("a", a -> a.value),
                "no update lost: both sections were held");
        assertEquals(2 * calls, pool.<Integer, RuntimeException>call("b", b -> b.value));
    }

    @Test
    void perObjectModeRunsDifferentObjectsInParallelAndOneObjectOnOneThread() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        CountDownLatch inA = new CountDownLatch(1);
        CountDownLatch leaveA = new CountDownLatch(1);
        TestKit.Forked<Integer> first = fork(
                "first in a",
                () -> pool.call("a", a -> {
                    inA.countDown();
                    TestKeyedPoolFixtures.awaitLatch(leaveA);
                    return ++a.value;
                }));
        TestKeyedPoolFixtures.awaitLatch(inA);
        assertEquals(
                1,
                fork("in b meanwhile", () -> pool.<Integer, RuntimeException>call("b", b -> ++b.value))
                        .join(),
                "b is not blocked by a");
        AtomicInteger entered = new AtomicInteger();
        TestKit.Forked<Integer> second = fork(
                "second in a",
                () -> pool.call("a", a -> {
                    entered.incrementAndGet();
                    return ++a.value;
                }));
        awaitParked(second.thread);
        assertEquals(0, entered.get(), "a second thread does not enter a while the first is inside");
        leaveA.countDown();
        assertEquals(1, first.join());
        assertEquals(2, second.join());
    }

    @Test
    void poolExclusiveStillStopsTheWorldInPerObjectMode() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch leave = new CountDownLatch(1);
        TestKit.Forked<Integer> caller = fork(
                "caller",
                () -> pool.call("a", a -> {
                    inside.countDown();
                    TestKeyedPoolFixtures.awaitLatch(leave);
                    return ++a.value;
                }));
        TestKeyedPoolFixtures.awaitLatch(inside);
        AtomicInteger stopped = new AtomicInteger();
        TestKit.Forked<Integer> stopper = fork("stopper", () -> {
            try (Attachment world = pool.stopTheWorld();
                    Handle<Box> a = pool.acquire("a")) {
                stopped.incrementAndGet();
                return a.get().value; // strict access allows the world's only attached thread
            }
        });
        awaitParked(stopper.thread);
        assertEquals(0, stopped.get(), "exclusive() waits for the attached caller");
        leave.countDown();
        assertEquals(1, caller.join());
        assertEquals(1, stopper.join());
    }

    @Test
    void callAsyncWaitsForTheSectionWithoutAThreadAndRunsInsideIt() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        Handle<Box> handle = acquire(pool, "a");
        Guard held = pool.attached(handle::section);
        ConcurrentHashMap<String, Thread> ranOn = new ConcurrentHashMap<>();
        CompletableFuture<Integer> later = pool.callAsync("a", CancellationToken.none(), a -> {
                    ranOn.put("fn", Thread.currentThread());
                    assertTrue(pool.isAttached(), "the function runs attached");
                    return ++a.value; // strict access: the async caller holds the section
                })
                .toCompletableFuture();
        assertFalse(later.isDone(), "waits for the section");
        TestKit.Forked<Thread> releaser = fork("releaser", () -> {
            held.close(); // the grant hands the function to the call executor
            return Thread.currentThread();
        });
        assertEquals(1, later.get(BOUND.toSeconds(), TimeUnit.SECONDS));
        assertNotSame(releaser.join(), ranOn.get("fn"), "not on the thread that released the section");
        assertNotSame(Thread.currentThread(), ranOn.get("fn"), "not on the caller");
        handle.close();
    }

    @Test
    void callAsyncCancelledWhileWaitingForTheSectionGivesBackHandleAndGate() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        Handle<Box> handle = acquire(pool, "a");
        Guard held = pool.attached(handle::section);
        CancellationSource source = new CancellationSource();
        CompletableFuture<Integer> later =
                pool.callAsync("a", source.token(), a -> ++a.value).toCompletableFuture();
        CompletableFuture<Integer> abandoned =
                pool.callAsync("a", CancellationToken.none(), a -> ++a.value).toCompletableFuture();
        assertFalse(later.isDone());
        source.cancel();
        assertInstanceOf(CancellationException.class, unwrap(failureOf(later)));
        abandoned.cancel(false); // the caller gives up on its own future
        assertTrue(fork("stop the world", () -> {
                    try (Attachment world = pool.stopTheWorld()) {
                        return true; // no gate hold was left behind
                    }
                })
                .join());
        held.close();
        assertEquals(0, handle.get().value, "neither function ran");
        handle.close();
        assertEquals(0, pool.attached(() -> pool.stats().live()), "no reference was left behind");
    }

    @Test
    void callAsyncOnAClosedPoolOrWithACancelledTokenFailsItsStageAndNeverThrows() {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, false);
        CancellationSource cancelled = new CancellationSource();
        cancelled.cancel();
        CompletableFuture<Integer> refused =
                pool.callAsync("a", cancelled.token(), a -> 1).toCompletableFuture();
        assertInstanceOf(CancellationException.class, unwrap(failureOf(refused)));
        pool.close();
        CompletableFuture<Integer> closed =
                pool.callAsync("a", CancellationToken.none(), a -> 1).toCompletableFuture();
        assertInstanceOf(PoolClosedException.class, unwrap(failureOf(closed)));
        assertThrows(NullPointerException.class, () -> pool.callAsync(null, CancellationToken.none(), a -> 1));
        assertTrue(created.isEmpty(), "nothing was created");
    }

    // ---------------------------------------------------------------- strict access

    @Test
    void strictAccessRejectsUnattachedAndOutOfSectionUseAndAllowsTheRest() throws Exception {
        RefPool<String, Box> pool = pool(AttachMode.PER_OBJECT, true);
        Handle<Box> handle = acquire(pool, "a");
        IllegalStateException unattached = assertThrows(IllegalStateException.class, handle::get);
        assertTrue(unattached.getMessage().contains("not attached"), unattached.getMessage());
        assertTrue(unattached.getMessage().contains(Thread.currentThread().getName()), unattached.getMessage());
        pool.attached(() -> {
            IllegalStateException outside = assertThrows(IllegalStateException.class, handle::get);
            assertTrue(outside.getMessage().contains("section"), outside.getMessage());
            try (Guard section = handle.section()) {
                assertSame(created.get(0), handle.get(), "attached and inside the section");
            }
            return null;
        });
        Guard asyncHeld = handle.sectionAsync(CancellationToken.none())
                .toCompletableFuture()
                .join();
        assertSame(
                created.get(0),
                pool.attached(handle::get),
                "a section granted to an async caller admits attached threads");
        asyncHeld.close();
        assertThrows(IllegalStateException.class, () -> pool.attached(handle::get), "not after it is released");
        try (Attachment world = pool.stopTheWorld()) {
            assertSame(created.get(0), handle.get(), "the thread that stopped the world");
        }
        assertEquals(1, pool.<Integer, RuntimeException>call("a", a -> ++a.value));
        handle.close();

        RefPool<String, Box> shared = pool(AttachMode.SHARED, true);
        Handle<Box> b = acquire(shared, "b");
        assertThrows(IllegalStateException.class, b::get, "SHARED: unattached use is refused");
        assertNotSame(null, shared.attached(b::get), "SHARED: attached use needs no section");
        b.close();
    }

    // ---------------------------------------------------------------- helpers

    private static Throwable failureOf(CompletableFuture<?> future) {
        try {
            future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            return e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
        }
        throw new AssertionError("expected a failed stage, got " + future.join());
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    private static void spin(long nanos) {
        long start = System.nanoTime();
        while (System.nanoTime() - start < nanos) {
            Thread.onSpinWait();
        }
    }

    /**
     * Runs two actions at about the same moment: the caller's and one on a helper thread that spins
     * between rounds, so no wake-up separates them; a positive skew delays the helper's action by
     * that many nanoseconds, a negative one the caller's.
     */
    private static final class SpinRacer implements AutoCloseable {
        private volatile Runnable task;
        private volatile boolean done;
        private volatile boolean closed;
        private final Thread helper;

        SpinRacer() {
            helper = new Thread(
                    () -> {
                        while (!closed) {
                            Runnable t = task;
                            if (t == null) {
                                Thread.onSpinWait();
                                continue;
                            }
                            task = null;
                            t.run();
                            done = true;
                        }
                    },
                    "racer");
            helper.setDaemon(true);
            helper.start();
        }

        void race(Runnable helperSide, Runnable callerSide, long skewNanos) {
            done = false;
            task = () -> {
                spin(Math.max(0, skewNanos));
                helperSide.run();
            };
            spin(Math.max(0, -skewNanos));
            callerSide.run();
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (!done) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the racer never ran its side");
                }
                Thread.yield();
            }
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
