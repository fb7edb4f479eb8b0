package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.joinedCancellation;
import static io.refpool.testkit.TestKit.joinedFailure;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The table "Waiting and failing" of docs/guide.md, row by row, for every entry point of the pool
 * that waits: how a timeout, an interrupt, a cancelled token, a zero or negative duration and a
 * null argument end a blocking wait and an async stage. Every wait is forced: a holder thread keeps
 * what the entry point needs (the whole pool, one object's section, or one object's creation)
 * until the test lets it go, so the wait under test must queue. Afterwards nothing may be held.
 */
class WaitingContractTest {
    private static final String POOL = "waits";
    private static final Duration SHORT = Duration.ofMillis(50);
    /** A key nobody holds: acquiring it needs the gate. */
    private static final String FREE_KEY = "b";
    /** The key the fixture holds a handle to, whose section a holder can take. */
    private static final String HELD_KEY = "a";
    /** The key whose creation the holder keeps running. */
    private static final String SLOW_KEY = "slow";

    /** What a holder thread keeps so that the entry point under test must wait. */
    enum Blocker {
        /** {@code pool.stopTheWorld()}: no thread can attach, nobody can stop the world. */
        WORLD,
        /** The section of {@link #HELD_KEY}, held inside {@code call}. */
        SECTION,
        /** The creation of {@link #SLOW_KEY}: its factory runs until let go. */
        CREATION
    }

    /** The argument an entry point waits with, besides its key and function. */
    enum Arg {
        NONE,
        TOKEN,
        TIMEOUT
    }

    /** A pooled object. */
    record Session(String key) {}

    /** One pool, one handle the test holds, and the holder thread of one blocker. */
    static final class Fixture implements AutoCloseable {
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final RefPool<String, Session> pool;
        final Handle<Session> handle;
        private TestKit.Forked<Void> holder;

        Fixture() {
            pool = RefPool.builder((String key) -> {
                        if (key.equals(SLOW_KEY)) {
                            held.countDown();
                            await(release);
                        }
                        return new Session(key);
                    })
                    .name(POOL)
                    .attachMode(AttachMode.PER_OBJECT)
                    .build();
            handle = pool.attached(() -> pool.acquire(HELD_KEY));
        }

        /** Starts the holder of {@code blocker} and returns once it holds. */
        Fixture block(Blocker blocker) {
            holder = TestKit.forkRun("holder of " + blocker, () -> {
                switch (blocker) {
                    case WORLD -> {
                        try (Attachment world = pool.stopTheWorld()) {
                            held.countDown();
                            await(release);
                        }
                    }
                    case SECTION ->
                        pool.call(HELD_KEY, session -> {
                            held.countDown();
                            await(release);
                            return null;
                        });
                    case CREATION -> pool.call(SLOW_KEY, session -> null);
                }
            });
            await(held);
            return this;
        }

        /** Lets the holder go and waits for it. */
        void unblock() throws Exception {
            release.countDown();
            if (holder != null) {
                holder.join();
                holder = null;
            }
        }

        /** Asserts the wait under test left nothing held: the gate and the section are free, one object lives. */
        void assertNothingHeld() {
            pool.flush();
            try (Attachment attached = assertDoesNotThrow(() -> pool.stopTheWorld(Duration.ZERO), "the pool is free");
                    Guard section = assertDoesNotThrow(() -> handle.section(Duration.ZERO), "the section is free")) {
                assertNotNull(section);
            }
            assertEquals(1, pool.stats().live(), () -> "only the fixture's object lives: " + pool.stats());
            assertEquals(0, pool.stats().capacityWaiters());
        }

        @Override
        public void close() throws Exception {
            unblock();
            if (!pool.isClosed()) {
                assertNothingHeld();
            }
            handle.close();
            pool.close();
        }
    }

    /** An entry point of the pool that waits. */
    enum Entry {
        ATTACH("attach()", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attach();
            }
        },
        ATTACH_TOKEN("attach(token)", false, Blocker.WORLD, Arg.TOKEN, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attach(token);
            }
        },
        ATTACH_TIMED("attach(Duration)", false, Blocker.WORLD, Arg.TIMEOUT, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attach(timeout);
            }
        },
        EXCLUSIVE("stopTheWorld()", false, Blocker.WORLD, Arg.NONE, "exclusive use of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.stopTheWorld();
            }
        },
        EXCLUSIVE_TOKEN("stopTheWorld(token)", false, Blocker.WORLD, Arg.TOKEN, "exclusive use of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.stopTheWorld(token);
            }
        },
        EXCLUSIVE_TIMED("stopTheWorld(Duration)", false, Blocker.WORLD, Arg.TIMEOUT, "exclusive use of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.stopTheWorld(timeout);
            }
        },
        ATTACHED("attached(Supplier)", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attached(() -> "ran");
            }
        },
        CALL("call(K, Function)", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.call(HELD_KEY, Session::key);
            }
        },
        CALL_TWO("call(K, K, BiFunction)", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.call(HELD_KEY, FREE_KEY, (a, b) -> a.key() + b.key());
            }
        },
        CALL_IN_SECTION("call(K, Function), section held", false, Blocker.SECTION, Arg.NONE, "the section of key 'a'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.call(HELD_KEY, Session::key);
            }
        },
        CALL_DURING_CREATION(
                "call(K, Function), object being created",
                false,
                Blocker.CREATION,
                Arg.NONE,
                "the creation of the object of key 'slow' in pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.call(SLOW_KEY, Session::key);
            }
        },
        ACQUIRE_DURING_CREATION(
                "acquire(K), object being created",
                false,
                Blocker.CREATION,
                Arg.NONE,
                "the creation of the object of key 'slow' in pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attached(() -> f.pool.acquire(SLOW_KEY));
            }
        },
        ACQUIRE_TIMED(
                "acquire(K, Duration)", false, Blocker.WORLD, Arg.TIMEOUT, "an object for key 'b' in pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.acquire(FREE_KEY, timeout);
            }
        },
        FLUSH("flush()", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                f.pool.flush();
                return null;
            }
        },
        INVALIDATE("invalidate(K)", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.invalidate(FREE_KEY);
            }
        },
        CLEAR_IDLE("clearIdle()", false, Blocker.WORLD, Arg.NONE, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.clearIdle();
            }
        },
        SECTION("Handle.section()", false, Blocker.SECTION, Arg.NONE, "the section of key 'a'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attached(() -> f.handle.section());
            }
        },
        SECTION_TOKEN("Handle.section(token)", false, Blocker.SECTION, Arg.TOKEN, "the section of key 'a'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attached(() -> f.handle.section(token));
            }
        },
        SECTION_TIMED("Handle.section(Duration)", false, Blocker.SECTION, Arg.TIMEOUT, "the section of key 'a'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attached(() -> f.handle.section(timeout));
            }
        },
        ATTACH_ASYNC(
                "attachAsync(token, Function)", true, Blocker.WORLD, Arg.TOKEN, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.attachAsync(token, attachment -> "ran");
            }
        },
        ACQUIRE_ASYNC("acquireAsync(K, token)", true, Blocker.WORLD, Arg.TOKEN, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.acquireAsync(FREE_KEY, token);
            }
        },
        ACQUIRE_ASYNC_TIMED(
                "acquireAsync(K, Duration)",
                true,
                Blocker.WORLD,
                Arg.TIMEOUT,
                "an object for key 'b' in pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.acquireAsync(FREE_KEY, timeout);
            }
        },
        CALL_ASYNC("callAsync(K, token, Function)", true, Blocker.WORLD, Arg.TOKEN, "the attach gate of pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.callAsync(FREE_KEY, token, Session::key);
            }
        },
        CALL_ASYNC_IN_SECTION(
                "callAsync(K, token, Function), section held",
                true,
                Blocker.SECTION,
                Arg.TOKEN,
                "the section of key 'a' in pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.pool.callAsync(HELD_KEY, token, Session::key);
            }
        },
        SECTION_ASYNC(
                "Handle.sectionAsync(token)",
                true,
                Blocker.SECTION,
                Arg.TOKEN,
                "the section of key 'a' in pool 'waits'") {
            @Override
            Object call(Fixture f, Duration timeout, CancellationToken token) {
                return f.handle.sectionAsync(token);
            }
        };

        private final String name;
        final boolean async;
        final Blocker blocker;
        final Arg arg;
        /** What the messages of a wait's end name. */
        final String resource;

        Entry(String name, boolean async, Blocker blocker, Arg arg, String resource) {
            this.name = name;
            this.async = async;
            this.blocker = blocker;
            this.arg = arg;
            this.resource = resource;
        }

        /**
         * Calls the entry point with {@code timeout} or {@code token} where it takes one: a sync
         * one's result, to close on the same thread, or an async one's stage.
         */
        abstract Object call(Fixture f, Duration timeout, CancellationToken token);

        /** Calls a sync entry point and closes what it returned, on this thread. */
        void callAndClose(Fixture f, Duration timeout, CancellationToken token) throws Exception {
            Object result = call(f, timeout, token);
            if (result instanceof AutoCloseable) {
                ((AutoCloseable) result).close();
            }
        }

        /** Calls an async entry point: the call itself must not throw. */
        CompletableFuture<?> stage(Fixture f, Duration timeout, CancellationToken token) {
            return assertDoesNotThrow(() -> (CompletionStage<?>) call(f, timeout, token), name + " threw")
                    .toCompletableFuture();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static Stream<Entry> entries(Predicate<Entry> which) {
        return Arrays.stream(Entry.values()).filter(which);
    }

    static Stream<Entry> syncEntries() {
        return entries(e -> !e.async);
    }

    static Stream<Entry> syncTimed() {
        return entries(e -> !e.async && e.arg == Arg.TIMEOUT);
    }

    static Stream<Entry> syncWithToken() {
        return entries(e -> !e.async && e.arg == Arg.TOKEN);
    }

    static Stream<Entry> syncWithAnArgument() {
        return entries(e -> !e.async && e.arg != Arg.NONE);
    }

    static Stream<Entry> asyncEntries() {
        return entries(e -> e.async);
    }

    static Stream<Entry> asyncWithToken() {
        return entries(e -> e.async && e.arg == Arg.TOKEN);
    }

    static Stream<Entry> asyncTimed() {
        return entries(e -> e.async && e.arg == Arg.TIMEOUT);
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(TestKit.BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("a latch was never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a latch", e);
        }
    }

    private static boolean hasFrame(Throwable failure, String method) {
        return Arrays.stream(failure.getStackTrace())
                .anyMatch(frame -> frame.getMethodName().equals(method));
    }

    private static void assertNames(Throwable failure, String... words) {
        for (String word : words) {
            assertTrue(failure.getMessage().contains(word), () -> "'" + failure.getMessage() + "' should name " + word);
        }
    }

    // ---------------------------------------------------------------- sync wait: timeout

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncTimed")
    void timeoutThrowsWaitTimeoutExceptionNamingWhatAndHowLongWithTheCallersStack(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            WaitTimeoutException timedOut =
                    assertThrows(WaitTimeoutException.class, () -> entry.callAndClose(f, SHORT, null));

            assertFalse(CancellationException.class.isInstance(timedOut), "a timeout is not a cancellation");
            assertNames(timedOut, "timed out after 50 ms waiting for " + entry.resource);
            assertEquals(SHORT, timedOut.timeout());
            assertTrue(hasFrame(timedOut, "timeoutThrowsWaitTimeoutExceptionNamingWhatAndHowLongWithTheCallersStack"));
        }
    }

    // ---------------------------------------------------------------- sync wait: interrupt

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncEntries")
    void interruptThrowsWaitInterruptedExceptionNamingWhatAndKeepsTheStatus(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            CancellationSource source = new CancellationSource();
            TestKit.Forked<Boolean> waiter = fork("waiter", () -> {
                try {
                    entry.callAndClose(f, TestKit.BOUND, source.token());
                    throw new AssertionError(entry + " returned though " + entry.blocker + " was held");
                } catch (WaitInterruptedException e) {
                    assertNames(e, "interrupted while waiting for " + entry.resource, "the interrupt status is kept");
                    assertInstanceOf(InterruptedException.class, e.getCause());
                    return Thread.currentThread().isInterrupted();
                }
            });
            awaitParked(waiter.thread);

            waiter.thread.interrupt();

            assertTrue(waiter.join(), "the interrupt status is set afterwards");
        }
    }

    // ---------------------------------------------------------------- sync wait: cancellation

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncWithToken")
    void tokenCancelThrowsCancellationExceptionNamingWhat(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            CancellationSource source = new CancellationSource();
            TestKit.Forked<Void> waiter = TestKit.forkRun("waiter", () -> entry.callAndClose(f, null, source.token()));
            awaitParked(waiter.thread);

            source.cancel();

            CancellationException cancelled = assertInstanceOf(CancellationException.class, waiter.joinFailure());
            assertNames(cancelled, "cancelled while waiting for " + entry.resource);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncWithToken")
    void tokenCancelledBeforeTheCallThrowsCancellationExceptionEvenIfFree(Entry entry) throws Exception {
        try (Fixture f = new Fixture()) {
            CancellationSource source = new CancellationSource();
            source.cancel();

            assertThrows(CancellationException.class, () -> entry.callAndClose(f, null, source.token()));
        }
    }

    // ---------------------------------------------------------------- sync wait: zero and negative

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncTimed")
    void zeroOnAHeldResourceTimesOutAtOnce(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            WaitTimeoutException timedOut =
                    assertThrows(WaitTimeoutException.class, () -> entry.callAndClose(f, Duration.ZERO, null));

            assertNames(timedOut, "timed out after 0 ns waiting for " + entry.resource);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncTimed")
    void zeroOnAFreeResourceTakesIt(Entry entry) throws Exception {
        try (Fixture f = new Fixture()) {
            Object taken = entry.call(f, Duration.ZERO, null);

            assertNotNull(taken);
            ((AutoCloseable) taken).close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncTimed")
    void negativeThrowsAtTheCallNamingTheArgumentAndItsValue(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            TestKit.Forked<Void> caller = // a thread of its own: had it waited, the join would tell
                    TestKit.forkRun("caller", () -> entry.callAndClose(f, Duration.ofMillis(-1), null));

            IllegalArgumentException refused = assertInstanceOf(IllegalArgumentException.class, caller.joinFailure());

            assertNames(refused, "timeout", "PT-0.001S");
        }
    }

    // ---------------------------------------------------------------- sync wait: null argument

    @ParameterizedTest(name = "{0}")
    @MethodSource("syncWithAnArgument")
    void nullArgumentThrowsAtTheCallNamingIt(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            TestKit.Forked<Void> caller = TestKit.forkRun("caller", () -> entry.callAndClose(f, null, null));

            NullPointerException refused = assertInstanceOf(NullPointerException.class, caller.joinFailure());

            assertEquals(entry.arg == Arg.TOKEN ? "token" : "timeout", refused.getMessage());
        }
    }

    // ---------------------------------------------------------------- async stage: timeout

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncTimed")
    void timeoutFailsTheStageWithWaitTimeoutExceptionItIsNotCancelled(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            CompletableFuture<?> stage = entry.stage(f, SHORT, null);

            WaitTimeoutException timedOut = assertInstanceOf(WaitTimeoutException.class, joinedFailure(stage));

            assertFalse(stage.isCancelled());
            assertNames(timedOut, "timed out after 50 ms waiting for " + entry.resource);
            assertTrue(hasFrame(timedOut, "timeoutFailsTheStageWithWaitTimeoutExceptionItIsNotCancelled"));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncTimed")
    void zeroOnAHeldResourceFailsTheStageAtOnce(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            CompletableFuture<?> stage = entry.stage(f, Duration.ZERO, null);

            assertTrue(stage.isDone(), "no wait: the stage has failed when the call returns");
            assertInstanceOf(WaitTimeoutException.class, joinedFailure(stage));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncTimed")
    void zeroOnAFreeResourceCompletesTheStage(Entry entry) throws Exception {
        try (Fixture f = new Fixture()) {
            CompletableFuture<?> stage = entry.stage(f, Duration.ZERO, null);

            assertTrue(stage.isDone(), "no wait: the stage is complete when the call returns");
            ((AutoCloseable) stage.join()).close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncTimed")
    void negativeFailsTheStageNamingTheArgumentAndItsValue(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            CompletableFuture<?> stage = entry.stage(f, Duration.ofMillis(-1), null);

            IllegalArgumentException refused = assertInstanceOf(IllegalArgumentException.class, joinedFailure(stage));

            assertNames(refused, "timeout", "PT-0.001S");
        }
    }

    // ---------------------------------------------------------------- async stage: interrupt

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncEntries")
    void theCallersInterruptNeitherEndsAnAsyncWaitNorIsCleared(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            Thread.currentThread().interrupt();
            CompletableFuture<?> stage;
            try {
                stage = entry.stage(f, TestKit.BOUND, CancellationToken.none());
                assertFalse(stage.isDone(), "it waits, interrupt or not");
            } finally {
                assertTrue(Thread.interrupted(), "the caller's status is left as it was");
            }

            f.unblock();

            Object value = stage.get(TestKit.BOUND.toMillis(), TimeUnit.MILLISECONDS);
            if (value instanceof AutoCloseable) {
                ((AutoCloseable) value).close();
            }
        }
    }

    // ---------------------------------------------------------------- async stage: cancellation

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncWithToken")
    void tokenCancelFailsTheStageWithACancellationNamingWhat(Entry entry) throws Exception {
        try (Fixture f = new Fixture().block(entry.blocker)) {
            CancellationSource source = new CancellationSource();
            CompletableFuture<?> stage = entry.stage(f, null, source.token());
            assertFalse(stage.isDone(), "it waits for " + entry.blocker);

            source.cancel();

            CancellationException cancelled = joinedCancellation(stage); // isCancelled(), on every JDK
            assertNames(cancelled, "cancelled while waiting for " + entry.resource);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncWithToken")
    void tokenCancelledBeforeTheCallFailsTheStageEvenIfFree(Entry entry) throws Exception {
        try (Fixture f = new Fixture()) {
            CancellationSource source = new CancellationSource();
            source.cancel();

            CancellationException cancelled = joinedCancellation(entry.stage(f, null, source.token()));

            assertNames(cancelled, "already cancelled");
        }
    }

    // ---------------------------------------------------------------- async stage: arguments and state

    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncEntries")
    void nullArgumentThrowsAtTheCallTheOnlyThrowOfAnAsyncEntry(Entry entry) throws Exception {
        try (Fixture f = new Fixture()) {
            NullPointerException refused = assertThrows(NullPointerException.class, () -> entry.call(f, null, null));

            assertEquals(entry.arg == Arg.TOKEN ? "token" : "timeout", refused.getMessage());
        }
    }

    /** A closed pool, or for a handle's section a closed handle: the stage fails, the call does not throw. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("asyncEntries")
    void aBadStateFailsTheStageAndNeverThrows(Entry entry) throws Exception {
        try (Fixture f = new Fixture()) {
            if (entry == Entry.SECTION_ASYNC) { // a section outlives the pool's close, not its handle's
                Handle<Session> closed = f.pool.attached(() -> f.pool.acquire(HELD_KEY));
                f.pool.attached(() -> {
                    closed.close();
                    return null;
                });
                CompletionStage<Guard> stage = assertDoesNotThrow(() -> closed.sectionAsync(CancellationToken.none()));
                assertNames(assertInstanceOf(IllegalStateException.class, joinedFailure(stage)), "already closed");
                return;
            }
            f.pool.close(); // the fixture's handle keeps its object: it is closed with it below

            Throwable failure = joinedFailure(entry.stage(f, TestKit.BOUND, CancellationToken.none()));

            assertInstanceOf(PoolClosedException.class, failure);
        }
    }
}
