package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What the pool's close reports of the handles still open: every object's, counted as what holds it. */
class OpenAtCloseReportTest {
    private static List<PoolError> openAtClose(List<PoolError> errors) {
        List<PoolError> reports = new ArrayList<>();
        for (PoolError e : errors) {
            if (e.kind() == PoolError.Kind.HANDLES_OPEN_AT_CLOSE) {
                reports.add(e);
            }
        }
        return reports;
    }

    /** An invalidated object is no longer its key's, but a handle still holds it: the close says so. */
    @ParameterizedTest
    @EnumSource(LeakDetection.class)
    void aHandleOnAnInvalidatedObjectIsReported(LeakDetection mode) {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        List<StringBuilder> disposed = new CopyOnWriteArrayList<>();
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .leakDetection(mode)
                .disposer((key, sb, cause) -> disposed.add(sb))
                .errorListener(errors::add)
                .build();
        Handle<StringBuilder> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("a");
            assertTrue(pool.invalidate("a"));
        }
        pool.close();
        assertEquals(List.of(), disposed, "its handle is open");

        List<PoolError> reports = openAtClose(errors);
        assertEquals(mode == LeakDetection.PARANOID ? 2 : 1, reports.size(), reports.toString());
        assertTrue(
                reports.get(0).message().startsWith("1 reference(s) still held"),
                reports.get(0).message());
        assertTrue(reports.get(0).message().contains("'a' (1)"), reports.get(0).message());
        held.close();
        eventually().until(() -> disposed.size() == 1); // by the drainer, after the close
    }

    /** A held section keeps a reference of its own: the summary counts references, and says so. */
    @Test
    void aHeldSectionCountsAsAReferenceOfItsOwn() throws Exception {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .errorListener(errors::add)
                .build();
        Handle<StringBuilder> held;
        try (Attachment attached = pool.attach()) {
            held = pool.acquire("a");
        }
        Guard section = held.sectionAsync(CancellationToken.none())
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        pool.close();
        List<PoolError> reports = openAtClose(errors);
        assertEquals(1, reports.size(), reports.toString());
        assertTrue(
                reports.get(0).message().startsWith("2 reference(s) still held"),
                reports.get(0).message());
        assertTrue(
                reports.get(0).message().contains("held sections"),
                reports.get(0).message());
        section.close();
        held.close();
    }
}
