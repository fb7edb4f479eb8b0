package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Section hooks: enter on the thread that took the section, after it holds it; leave on the same
 * thread before it is released; once per hold; a failing hook leaves the section free and is
 * reported.
 */
class SectionHooksTest {
    private static final long BOUND_SECONDS = 10;

    /** What ran, in order: "enter k@thread", "fn k@thread", "leave k@thread". */
    private final List<String> events = new CopyOnWriteArrayList<>();

    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final AtomicInteger failEnters = new AtomicInteger();
    private final AtomicInteger failLeaves = new AtomicInteger();

    private static String on(String what, String key) {
        return what + " " + key + "@" + Thread.currentThread().getName();
    }

    private RefPool.Builder<String, Object> builder() {
        return RefPool.newBuilder()
                .errorListener(errors::add)
                .idle(cache -> cache.maximumSize(10))
                .sectionHooks(SectionHooks.of(
                        (String key, Object object) -> {
                            events.add(on("enter", key));
                            if (failEnters.getAndDecrement() > 0) {
                                throw new IllegalStateException("enter failed");
                            }
                        },
                        (String key, Object object) -> {
                            events.add(on("leave", key));
                            if (failLeaves.getAndDecrement() > 0) {
                                throw new IllegalStateException("leave failed");
                            }
                        }));
    }

    private RefPool<String, Object> pool() {
        return builder().build(key -> new Object());
    }

    private String fn(String key) {
        events.add(on("fn", key));
        return "done";
    }

    @Test
    void aCallRunsEnterBeforeItsFunctionAndLeaveAfterItOnTheSameThread() {
        RefPool<String, Object> pool = pool();
        assertEquals("done", pool.call("k", o -> fn("k")));
        assertEquals(List.of(on("enter", "k"), on("fn", "k"), on("leave", "k")), events);

        events.clear();
        pool.run("k", Duration.ofSeconds(BOUND_SECONDS), o -> fn("k"));
        assertEquals(List.of(on("enter", "k"), on("fn", "k"), on("leave", "k")), events, "the timed form too");
        pool.close();
    }

    @Test
    void aTwoKeyCallRunsTheHooksOfBothSectionsNested() {
        RefPool<String, Object> pool = pool();
        pool.call("a", o -> o);
        pool.call("b", o -> o);
        events.clear();
        pool.call("b", "a", (b, a) -> fn("ab"));
        assertEquals(
                List.of(on("enter", "a"), on("enter", "b"), on("fn", "ab"), on("leave", "b"), on("leave", "a")),
                events,
                "in creation order, whatever order the keys are named in");
        pool.close();
    }

    @Test
    void aHandlesSectionRunsEnterAtEntryAndLeaveAtItsClose() {
        RefPool<String, Object> pool = pool();
        try (Attachment attached = pool.attach();
                Handle<Object> handle = pool.acquire("k")) {
            try (Guard section = handle.section()) {
                assertEquals(List.of(on("enter", "k")), events);
            }
            assertEquals(List.of(on("enter", "k"), on("leave", "k")), events);
            events.clear();
            handle.call(o -> fn("k"));
            assertEquals(List.of(on("enter", "k"), on("fn", "k"), on("leave", "k")), events, "Handle.call");
        }
        pool.close();
    }

    @Test
    void aReentrantSectionRunsTheHooksOnceAtTheOutermostHold() {
        RefPool<String, Object> pool = pool();
        pool.call("k", o -> {
            try (Handle<Object> handle = pool.acquire("k")) {
                assertThrows(IllegalStateException.class, handle::section, "a second hold would wait for itself");
            }
            return fn("k");
        });
        assertEquals(List.of(on("enter", "k"), on("fn", "k"), on("leave", "k")), events);
        assertTrue(errors.isEmpty(), () -> "" + errors);
        pool.close();
    }

    @Test
    void callAsyncRunsTheHooksOnTheExecutorThreadThatRunsTheFunction() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "script-runner"));
        try {
            RefPool<String, Object> pool = builder().callExecutor(executor).build(key -> new Object());
            assertEquals(
                    "done",
                    pool.callAsync("k", CancellationToken.none(), o -> fn("k"))
                            .toCompletableFuture()
                            .get(BOUND_SECONDS, TimeUnit.SECONDS));
            assertEquals(List.of("enter k@script-runner", "fn k@script-runner", "leave k@script-runner"), events);
            pool.close();
        } finally {
            executor.shutdown();
        }
    }

    @Test
    void aFailingEnterFailsTheCallLeavesTheSectionFreeAndIsReported() throws Exception {
        RefPool<String, Object> pool = pool();
        failEnters.set(1);

        IllegalStateException failure = assertThrows(IllegalStateException.class, () -> pool.call("k", o -> fn("k")));

        assertEquals("enter failed", failure.getMessage());
        assertEquals(List.of(on("enter", "k")), events, "neither the function nor leave ran");
        assertEquals(1, errors.size(), () -> "" + errors);
        assertEquals(PoolError.Kind.SECTION_HOOK_FAILED, errors.get(0).kind());
        assertSame(failure, errors.get(0).cause());
        assertSectionFreeForAnotherThread(pool);
        pool.close();
        assertEquals(0, pool.stats().live());
    }

    @Test
    void anEnterThrowingACheckedExceptionIsReportedAndReachesTheCallerAsItIs() throws Exception {
        java.io.IOException checked = new java.io.IOException("enter failed, checked");
        RefPool<String, Object> pool = RefPool.newBuilder()
                .errorListener(errors::add)
                .sectionHooks(SectionHooks.of(
                        (String key, Object object) -> {
                            events.add(on("enter", key));
                            if (failEnters.getAndDecrement() > 0) {
                                throw TestKeyedPoolFixtures.sneakyThrow(checked); // as Kotlin or Groovy code may
                            }
                        },
                        (String key, Object object) -> events.add(on("leave", key))))
                .build(key -> new Object());
        failEnters.set(1);

        Exception failure = assertThrows(java.io.IOException.class, () -> pool.call("k", o -> fn("k")));

        assertSame(checked, failure);
        assertEquals(List.of(on("enter", "k")), events, "neither the function nor leave ran");
        assertEquals(1, errors.size(), () -> "" + errors);
        assertEquals(PoolError.Kind.SECTION_HOOK_FAILED, errors.get(0).kind());
        assertSame(checked, errors.get(0).cause());
        assertSectionFreeForAnotherThread(pool);
        pool.close();
        assertEquals(0, pool.stats().live());
    }

    @Test
    void aFailingEnterOfAHandlesSectionLeavesItFree() throws Exception {
        RefPool<String, Object> pool = pool();
        failEnters.set(1);
        try (Attachment attached = pool.attach();
                Handle<Object> handle = pool.acquire("k")) {
            assertThrows(IllegalStateException.class, handle::section);
            assertSectionFreeForAnotherThread(pool);
            failEnters.set(1);
            ExecutionException async =
                    assertThrows(ExecutionException.class, () -> handle.sectionAsync(CancellationToken.none())
                            .toCompletableFuture()
                            .get(BOUND_SECONDS, TimeUnit.SECONDS));
            assertEquals("enter failed", async.getCause().getMessage());
            assertSectionFreeForAnotherThread(pool);
        }
        assertEquals(2, errors.size(), () -> "" + errors);
        pool.close();
    }

    @Test
    void aFailingLeaveIsReportedAndTheSectionIsReleasedAnyway() throws Exception {
        RefPool<String, Object> pool = pool();
        failLeaves.set(1);

        assertEquals("done", pool.call("k", o -> fn("k")), "the call returns what its function returned");

        assertEquals(1, errors.size(), () -> "" + errors);
        assertEquals(PoolError.Kind.SECTION_HOOK_FAILED, errors.get(0).kind());
        assertEquals("leave failed", errors.get(0).cause().getMessage());
        assertSectionFreeForAnotherThread(pool);
        pool.close();
    }

    @Test
    void inGlobalModeACallTakesNoSectionAndRunsNoHooks() {
        RefPool<String, Object> pool = builder().attachMode(AttachMode.GLOBAL).build(key -> new Object());
        pool.call("k", o -> fn("k"));
        assertEquals(List.of(on("fn", "k")), events);
        pool.close();
    }

    /** Another thread takes the section of "k" without waiting: nobody holds it. */
    private static void assertSectionFreeForAnotherThread(RefPool<String, Object> pool) throws Exception {
        CompletableFuture<Throwable> other = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try (Attachment attached = pool.attach();
                    Handle<Object> handle = pool.acquire("k");
                    Guard section = handle.section(Duration.ZERO)) {
                other.complete(null);
            } catch (Throwable t) {
                other.complete(t);
            }
        });
        thread.start();
        Throwable failure = other.get(BOUND_SECONDS, TimeUnit.SECONDS);
        if (failure instanceof WaitTimeoutException) {
            throw new AssertionError("the section was left held", failure);
        }
        if (failure != null) {
            throw new AssertionError(failure);
        }
    }
}
