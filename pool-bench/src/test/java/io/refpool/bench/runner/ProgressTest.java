package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Mode;

class ProgressTest {
    @Test
    void estimatesFromTheProfileFirstThenFromMeasuredRuns() {
        AtomicLong clock = new AtomicLong();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Progress progress = new Progress(
                12, Duration.ofMillis(4200), clock::get, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        Row row = CannedResults.row("nested", Mode.Throughput, Map.of("state", "sparse"), 2, true);
        PlannedRun run = new PlannedRun(row, Optional.of("swap-flag"), 1, 2);

        progress.starting(run);
        clock.addAndGet(Duration.ofSeconds(10).toNanos());
        progress.finished();
        clock.addAndGet(Duration.ofSeconds(62).toNanos());
        progress.starting(run);

        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        // 12 runs of 4.2 s + 0.8 s JVM start
        assertEquals(
                "[ 1/12] attach nested state=sparse threads=2 impl=swap-flag fork 1/2  elapsed 0s, ~1m00s left",
                lines.get(0));
        // 11 runs left at the measured 10 s each
        assertEquals(
                "[ 2/12] attach nested state=sparse threads=2 impl=swap-flag fork 1/2  elapsed 1m12s, ~1m50s left",
                lines.get(1));
    }

    @Test
    void durationsReadAsClockSpans() {
        assertEquals("45s", Durations.elapsed(Duration.ofMillis(44_600)));
        assertEquals("1m12s", Durations.elapsed(Duration.ofSeconds(72)));
        assertEquals("1h03m", Durations.elapsed(Duration.ofMinutes(63)));
        assertEquals("500 ms", Durations.format(Duration.ofMillis(500)));
        assertEquals("2 s", Durations.format(Duration.ofSeconds(2)));
    }
}
