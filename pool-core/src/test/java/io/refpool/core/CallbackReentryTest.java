package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every entry point of the pool, called from inside every callback the pool runs user code in (the
 * factory, the disposer, a section function, a {@code callAsync} function, an async acquire's
 * continuation), in every attach mode. The call may be refused with an exception that says why; it
 * must never hang its thread, and afterwards no permit is lost, every future settles, and every
 * object is disposed exactly once.
 */
class CallbackReentryTest {
    private static final int MAX_OBJECTS = 4;
    private static final String HOST = "host";

    /** Where the entry point is called from. */
    enum Inside {
        FACTORY,
        DISPOSER,
        SECTION_FUNCTION,
        CALL_ASYNC_FUNCTION,
        ASYNC_CONTINUATION
    }

    /** An entry point, called for the host's own key or another; whatever it opens it closes. */
    enum EntryPoint {
        ATTACH,
        ATTACH_TIMED,
        EXCLUSIVE,
        EXCLUSIVE_TIMED,
        ATTACH_ASYNC,
        ACQUIRE_OWN_KEY,
        ACQUIRE_OTHER_KEY,
        ACQUIRE_ASYNC_OWN_KEY,
        ACQUIRE_ASYNC_TIMED,
        ACQUIRE_ASYNC_CANCELLED,
        CALL_OWN_KEY,
        CALL_OTHER_KEY,
        CALL_TWO_KEYS,
        CALL_ASYNC_OWN_KEY,
        CALL_ASYNC_OTHER_KEY,
        ATTACHED,
        HANDLE_EXCLUSIVE,
        HANDLE_EXCLUSIVE_ASYNC,
        FLUSH,
        INVALIDATE_OWN_KEY,
        INVALIDATE_OTHER_KEY,
        CLEAR_IDLE,
        STATS,
        CLOSE
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (AttachMode mode : AttachMode.values()) {
            for (Inside inside : Inside.values()) {
                for (EntryPoint entry : EntryPoint.values()) {
                    cases.add(Arguments.of(mode, inside, entry));
                }
            }
        }
        return cases.stream();
    }

    /** An engine object that counts its disposals. */
    static final class Res {
        final String key;
        final AtomicInteger disposals = new AtomicInteger();

        Res(String key) {
            this.key = key;
        }
    }

    /** One run: a pool whose callbacks call the entry point once, when armed. */
    static final class Run {
        final AttachMode mode;
        final Inside inside;
        final EntryPoint entry;
        final List<Res> created = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<?>> pending = new CopyOnWriteArrayList<>();
        final List<Throwable> refusals = new CopyOnWriteArrayList<>();
        final List<PoolError> errors = new CopyOnWriteArrayList<>();
        final AtomicBoolean armed = new AtomicBoolean();
        final AtomicInteger entered = new AtomicInteger();
        final RefPool<String, Res> pool;

        Run(AttachMode mode, Inside inside, EntryPoint entry) {
            this.mode = mode;
            this.inside = inside;
            this.entry = entry;
            this.pool = RefPool.builder((String key) -> {
                        if (inside == Inside.FACTORY && key.equals(HOST)) {
                            enter();
                        }
                        Res res = new Res(key);
                        created.add(res);
                        return res;
                    })
                    .disposer((key, res, cause) -> {
                        res.disposals.incrementAndGet();
                        if (inside == Inside.DISPOSER && key.equals(HOST)) {
                            enter();
                        }
                    })
                    .attachMode(mode)
                    .maxObjects(MAX_OBJECTS)
                    .idle(cache -> cache.maximumSize(2))
                    .errorListener(errors::add)
                    .name("reentry")
                    .build();
        }

        /** Runs the entry point once, if armed; a refusal is recorded, never thrown at the callback. */
        void enter() {
            if (!armed.compareAndSet(true, false)) {
                return;
            }
            entered.incrementAndGet();
            try {
                call(entry);
            } catch (RuntimeException refused) {
                refusals.add(refused);
            }
        }

        private void call(EntryPoint entry) {
            switch (entry) {
                case ATTACH -> pool.attach().close();
                case ATTACH_TIMED -> pool.attach(Duration.ofMillis(50)).close();
                case EXCLUSIVE -> pool.stopTheWorld().close();
                case EXCLUSIVE_TIMED -> pool.stopTheWorld(Duration.ofMillis(50)).close();
                case ATTACH_ASYNC -> track(pool.attachAsync(CancellationToken.none(), attachment -> 1));
                case ACQUIRE_OWN_KEY -> pool.attached(() -> pool.acquire(HOST)).close();
                case ACQUIRE_OTHER_KEY ->
                    pool.attached(() -> pool.acquire("other")).close();
                case ACQUIRE_ASYNC_OWN_KEY -> trackHandle(pool.acquireAsync(HOST, CancellationToken.none()));
                case ACQUIRE_ASYNC_TIMED -> trackHandle(pool.acquireAsync("other", Duration.ofMillis(50)));
                case ACQUIRE_ASYNC_CANCELLED -> {
                    CancellationSource source = new CancellationSource();
                    trackHandle(pool.acquireAsync("other", source.token()));
                    source.cancel();
                }
                case CALL_OWN_KEY -> pool.call(HOST, res -> res.key);
                case CALL_OTHER_KEY -> pool.call("other", res -> res.key);
                case CALL_TWO_KEYS -> pool.call(HOST, "other", (a, b) -> a.key + b.key);
                case CALL_ASYNC_OWN_KEY -> track(pool.callAsync(HOST, CancellationToken.none(), res -> res.key));
                case CALL_ASYNC_OTHER_KEY -> track(pool.callAsync("other", CancellationToken.none(), res -> res.key));
                case ATTACHED -> pool.attached(() -> pool.stats());
                case HANDLE_EXCLUSIVE ->
                    pool.attached(() -> {
                        try (Handle<Res> other = pool.acquire("other");
                                Guard section = other.section()) {
                            return other.get().key;
                        }
                    });
                case HANDLE_EXCLUSIVE_ASYNC -> {
                    Handle<Res> other = pool.attached(() -> pool.acquire("other"));
                    track(other.sectionAsync(CancellationToken.none()).whenComplete((section, failure) -> {
                        if (section != null) {
                            section.close();
                        }
                        other.close();
                    }));
                }
                case FLUSH -> pool.flush();
                case INVALIDATE_OWN_KEY -> pool.invalidate(HOST);
                case INVALIDATE_OTHER_KEY -> pool.invalidate("other");
                case CLEAR_IDLE -> pool.clearIdle();
                case STATS -> pool.stats();
                case CLOSE -> pool.close();
            }
        }

        private void track(CompletionStage<?> stage) {
            pending.add(stage.toCompletableFuture());
        }

        private void trackHandle(CompletionStage<Handle<Res>> stage) {
            pending.add(stage.toCompletableFuture().whenComplete((handle, failure) -> {
                if (handle != null) {
                    handle.close();
                }
            }));
        }

        /** Drives the pool into the callback, with the entry point armed. */
        void drive() throws Exception {
            pool.call("other", res -> res.key); // "other" exists, idle
            switch (inside) {
                case FACTORY -> {
                    armed.set(true);
                    pool.call(HOST, res -> res.key);
                }
                case DISPOSER -> {
                    pool.call(HOST, res -> res.key);
                    armed.set(true);
                    pool.clearIdle();
                }
                case SECTION_FUNCTION -> {
                    armed.set(true);
                    pool.call(HOST, res -> {
                        enter();
                        return res.key;
                    });
                }
                case CALL_ASYNC_FUNCTION -> {
                    armed.set(true);
                    pool.callAsync(HOST, CancellationToken.none(), res -> {
                                enter();
                                return res.key;
                            })
                            .toCompletableFuture()
                            .get(BOUND.toSeconds(), TimeUnit.SECONDS);
                }
                case ASYNC_CONTINUATION -> {
                    armed.set(true);
                    pool.acquireAsync(HOST, CancellationToken.none())
                            .thenAccept(handle -> {
                                try (handle) {
                                    enter();
                                }
                            })
                            .toCompletableFuture()
                            .get(BOUND.toSeconds(), TimeUnit.SECONDS);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}: {2} inside the {1}")
    @MethodSource("cases")
    void anEntryPointCalledFromACallbackHangsNothingAndLosesNothing(AttachMode mode, Inside inside, EntryPoint entry)
            throws Exception {
        Run run = new Run(mode, inside, entry);
        TestKit.Forked<Void> driver = TestKit.forkRun("driver", run::drive);
        try {
            driver.join(); // bounded: a hang fails here with the driver's stack
        } catch (java.util.concurrent.ExecutionException | RuntimeException failure) {
            if (!(entry == EntryPoint.CLOSE && failure instanceof PoolClosedException)) {
                throw failure;
            }
        }
        assertEquals(1, run.entered.get(), "the callback ran the entry point");
        for (CompletableFuture<?> future : run.pending) {
            future.handle((value, failure) -> null).get(BOUND.toSeconds(), TimeUnit.SECONDS); // every future settles
        }
        if (!run.pool.isClosed()) {
            run.pool.flush();
            assertEquals(0L, run.pool.stats().live(), "nothing is left held: " + run.refusals);
            assertAllPermitsFree(run.pool);
            run.pool.close();
        }
        TestKit.eventually().until(() -> run.created.stream().allMatch(res -> res.disposals.get() == 1));
        for (Res res : run.created) {
            assertEquals(1, res.disposals.get(), res.key + " disposed exactly once");
        }
        for (PoolError error : run.errors) { // a close from inside a callback leaves the callers' handles open
            assertEquals(PoolError.Kind.HANDLES_OPEN_AT_CLOSE, error.kind(), "unexpected report: " + error);
        }
    }

    /** Exactly {@code MAX_OBJECTS} objects can be held at once: no permit lost, none made up. */
    private static void assertAllPermitsFree(RefPool<String, Res> pool) {
        pool.attached(() -> {
            List<Handle<Res>> handles = new ArrayList<>();
            for (int i = 0; i < MAX_OBJECTS; i++) {
                handles.add(pool.acquire("probe-" + i));
            }
            assertThrows(CapacityExhaustedException.class, () -> pool.acquire("probe-beyond"));
            handles.forEach(Handle::close);
            return null;
        });
    }
}
