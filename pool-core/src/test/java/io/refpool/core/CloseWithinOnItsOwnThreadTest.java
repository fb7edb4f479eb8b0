package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code close(Duration)} on a thread that a close would wait for (one attached to the pool, or the
 * thread running the close itself) does not wait for itself: as {@code close()} there, it returns
 * at once, and its limit is never spent waiting for the caller to leave.
 */
class CloseWithinOnItsOwnThreadTest {
    /** Far longer than the test's own bound: a close that waits for its caller is caught by the bound. */
    private static final Duration LONG_LIMIT = Duration.ofMinutes(10);

    private static final Duration BOUND = Duration.ofSeconds(5);

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeWithinFromAnAttachedThreadClosesTheWayCloseDoes(AttachMode mode) {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .build();
        boolean closed = assertTimeoutPreemptively(
                BOUND, () -> pool.attached(() -> pool.close(LONG_LIMIT)), "close(Duration) waited for its own caller");
        assertTrue(closed, "the pool closed on the calling thread, as close() does there");
        assertTrue(pool.isClosed());
        assertTrue(pool.close(Duration.ZERO), "a later close(Duration) finds it closed");
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeWithinInsideACallDoesNotInterruptOrOutwaitThatCall(AttachMode mode) {
        List<String> interrupted = new CopyOnWriteArrayList<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .interrupter((String key, Object object) -> {
                    interrupted.add(key);
                    return Interrupter.Outcome.KEEP;
                })
                .build();
        boolean closed = assertTimeoutPreemptively(
                BOUND,
                () -> pool.call("a", object -> pool.close(LONG_LIMIT)),
                "close(Duration) waited for its own call");
        assertTrue(closed);
        assertEquals(List.of(), interrupted, "the caller's own call is not interrupted by its close");
        assertEquals(1, pool.stats().disposals(DisposalCause.CLOSED), "the call's object closed after it returned");
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void closeWithinFromADisposerRunningTheCloseReturnsAtOnce(AttachMode mode) {
        AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();
        AtomicReference<Boolean> answer = new AtomicReference<>();
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .idle(cache -> cache.maximumSize(4))
                .disposer((String key, Object object, DisposalCause cause) ->
                        answer.set(self.get().close(LONG_LIMIT)))
                .build();
        self.set(pool);
        pool.call("a", object -> object);
        assertTimeoutPreemptively(
                BOUND,
                (org.junit.jupiter.api.function.Executable) pool::close,
                "the disposer's close(Duration) waited for the close running it");
        assertFalse(answer.get(), "inside the close, the pool is not closed yet");
        assertTrue(pool.close(Duration.ZERO));
    }
}
