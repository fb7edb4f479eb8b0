package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * {@link RefPool.Builder#heldTooLong}: a handle or call still open past the threshold is reported
 * once, with the site that acquired it, to the error listener, JFR and the stats. The check is run
 * by hand as if the clock read past the threshold (the threshold is an hour, so the periodic check
 * never fires during a test), except in the one test of the periodic check itself.
 */
class HeldTooLongTest {
    private static final Duration HOUR = Duration.ofHours(1);
    private static final long PAST = HOUR.toNanos() + TimeUnit.SECONDS.toNanos(1);

    private final TestResources resources = new TestResources();

    private RefPool<String, Resource> pool(Duration threshold) {
        return resources.build(resources.builder().name("watched").heldTooLong(threshold));
    }

    private static int checkPastThreshold(RefPool<?, ?> pool) {
        return pool.core().checkHeldForTests(System.nanoTime() + PAST);
    }

    private List<PoolError> reports() {
        return resources.errors.stream()
                .filter(e -> e.kind() == PoolError.Kind.HELD_TOO_LONG)
                .collect(Collectors.toList());
    }

    private static String stackOf(Throwable t) {
        StringWriter text = new StringWriter();
        t.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    private static Handle<Resource> acquireAndKeep(RefPool<String, Resource> pool, String key) {
        try (Attachment attached = pool.attach()) {
            return pool.acquire(key);
        }
    }

    @Test
    void aHandleOpenPastTheThresholdIsReportedOnceWithItsSite() {
        RefPool<String, Resource> pool = pool(HOUR);
        Handle<Resource> held = acquireAndKeep(pool, "a");
        assertEquals(0, pool.core().checkHeldForTests(System.nanoTime()), "not yet past the threshold");

        assertEquals(1, checkPastThreshold(pool));
        assertEquals(0, checkPastThreshold(pool), "reported once");
        List<PoolError> reports = reports();
        assertEquals(1, reports.size(), reports.toString());
        PoolError report = reports.get(0);
        assertEquals("a", report.key());
        assertTrue(report.message().contains("'watched'") && report.message().contains("'a'"), report.message());
        assertTrue(report.message().contains("ms"), report.message());
        assertNotNull(report.cause(), "the site");
        assertTrue(stackOf(report.cause()).contains("acquireAndKeep"), stackOf(report.cause()));
        assertEquals(1, pool.stats().heldTooLong());

        held.close();
        assertEquals(0, checkPastThreshold(pool), "closed: nothing more");
        assertEquals(1, reports().size());
        pool.close();
        assertEquals(
                List.of(),
                resources.errors.stream()
                        .filter(e -> e.kind() != PoolError.Kind.HELD_TOO_LONG)
                        .collect(Collectors.toList()));
    }

    @Test
    void aHandleClosedBeforeTheThresholdIsNeverReported() {
        RefPool<String, Resource> pool = pool(HOUR);
        acquireAndKeep(pool, "a").close();
        try (Attachment attached = pool.attach()) {
            Handle<Resource> shared = pool.acquire("b");
            shared.share().close();
            shared.close();
        }
        assertEquals(0, checkPastThreshold(pool));
        assertEquals(List.of(), reports());
        assertEquals(0, pool.stats().heldTooLong());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    @Test
    void aCallStillRunningPastTheThresholdIsReportedWithItsSite() throws Exception {
        RefPool<String, Resource> pool = pool(HOUR);
        int reported = pool.call("a", resource -> checkPastThreshold(pool));
        assertEquals(1, reported);
        PoolError report = reports().get(0);
        assertTrue(report.message().startsWith("a call"), report.message());
        assertTrue(
                stackOf(report.cause()).contains("aCallStillRunningPastTheThresholdIsReportedWithItsSite"),
                stackOf(report.cause()));
        assertEquals(0, checkPastThreshold(pool), "the call returned");

        pool.run("b", resource -> assertEquals(1, checkPastThreshold(pool)));
        int asyncReported = pool.<Integer>callAsync("c", CancellationToken.none(), resource -> checkPastThreshold(pool))
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
        assertEquals(1, asyncReported);
        assertEquals(3, pool.stats().heldTooLong());
        pool.close();
        assertEquals(3, resources.errors.size(), resources.errors.toString());
    }

    @Test
    void aTwoKeyCallStillRunningPastTheThresholdIsReportedOnceUnderItsFirstKey() throws Exception {
        RefPool<String, Resource> pool = pool(HOUR);
        int reported = pool.call("a", "b", (a, b) -> checkPastThreshold(pool) + checkPastThreshold(pool));
        assertEquals(1, reported, "one hold for both objects, reported once");
        List<PoolError> reports = reports();
        assertEquals(1, reports.size(), reports.toString());
        PoolError report = reports.get(0);
        assertEquals("a", report.key());
        assertTrue(
                report.message().startsWith("a two-key call")
                        && report.message().contains("'b'"),
                report.message());
        assertTrue(
                stackOf(report.cause())
                        .contains("aTwoKeyCallStillRunningPastTheThresholdIsReportedOnceUnderItsFirstKey"),
                stackOf(report.cause()));
        assertEquals(0, checkPastThreshold(pool), "the call returned");
        pool.run("c", "d", (c, d) -> assertEquals(1, checkPastThreshold(pool)));
        assertEquals(2, pool.stats().heldTooLong());
        pool.close();
    }

    @Test
    void aListenerThatThrowsBreaksNeitherTheCheckNorThePool() {
        List<PoolError> seen = new CopyOnWriteArrayList<>();
        RefPool<String, Resource> pool =
                resources.build(resources.builder().heldTooLong(HOUR).errorListener(error -> {
                    seen.add(error);
                    throw new IllegalStateException("listener down");
                }));
        Handle<Resource> a = acquireAndKeep(pool, "a");
        Handle<Resource> b = acquireAndKeep(pool, "b");
        assertEquals(2, checkPastThreshold(pool), "the first report's failure did not stop the second");
        assertEquals(2, seen.size());
        assertEquals(2, pool.stats().heldTooLong());
        a.close();
        b.close();
        acquireAndKeep(pool, "a").close(); // the pool goes on
        pool.close();
        assertEquals(3, pool.stats().disposals());
    }

    @Test
    void closingThePoolWithHandlesOpenEndsItsCheck() {
        RefPool<String, Resource> pool = pool(HOUR);
        Handle<Resource> held = acquireAndKeep(pool, "a");
        assertTrue(pool.core().heldCheckScheduledForTests());
        pool.close();
        assertFalse(pool.core().heldCheckScheduledForTests(), "the periodic check was left scheduled");
        held.close(); // off-attachment: applied by the drainer
        eventually().until(() -> resources.disposalCount() == 1);
    }

    @Test
    void thePeriodicCheckReportsWithoutHelp() {
        RefPool<String, Resource> pool = pool(Duration.ofMillis(1));
        Handle<Resource> held = acquireAndKeep(pool, "a");
        eventually().until(() -> !reports().isEmpty()); // the check, on its own thread
        held.close();
        pool.close();
        assertEquals(1, reports().size());
    }

    @Test
    void jfrRecordsAHandleHeldTooLong() throws Exception {
        Path file = Files.createTempFile("refpool-held", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.refpool.HeldTooLong");
            recording.start();
            RefPool<String, Resource> pool = pool(HOUR);
            Handle<Resource> held = acquireAndKeep(pool, "a");
            checkPastThreshold(pool);
            held.close();
            pool.close();
            recording.stop();
            recording.dump(file);
            List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("io.refpool.HeldTooLong"))
                    .collect(Collectors.toList());
            assertEquals(1, events.size(), events.toString());
            RecordedEvent event = events.get(0);
            assertEquals("watched", event.getString("pool"));
            assertTrue(event.getDuration("held").compareTo(HOUR) > 0);
            assertTrue(event.getString("site").contains("acquireAndKeep"));
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void aThresholdThatIsNotPositiveIsRefused() {
        RefPool.Builder<String, Resource> builder = resources.builder();
        IllegalArgumentException zero =
                assertThrows(IllegalArgumentException.class, () -> builder.heldTooLong(Duration.ZERO));
        assertTrue(
                zero.getMessage().contains("heldTooLong") && zero.getMessage().contains("PT0S"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder.heldTooLong(Duration.ofSeconds(-1)));
        assertThrows(NullPointerException.class, () -> builder.heldTooLong(null));
        RefPool<String, Resource> pool = resources.build(builder);
        assertFalse(pool.core().heldCheckScheduledForTests(), "the refused threshold changed nothing");
        pool.close();
    }
}
