package io.refpool.bench.runner;

import java.time.Duration;

/**
 * Short human forms of durations for the console.
 *
 * <pre>{@code
 * Durations.format(Duration.ofMillis(500));   // "500 ms"
 * Durations.elapsed(Duration.ofSeconds(72));  // "1m12s"
 * }</pre>
 */
final class Durations {
    private Durations() {}

    /** An iteration time: whole seconds as "2 s", anything else in milliseconds. */
    static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis > 0 && millis % 1000 == 0) {
            return millis / 1000 + " s";
        }
        return millis + " ms";
    }

    /** A wall-clock span rounded to the second: "45s", "1m12s", "1h03m". */
    static String elapsed(Duration duration) {
        long seconds = Math.max(0, Math.round(duration.toMillis() / 1000.0));
        if (seconds < 60) {
            return seconds + "s";
        }
        if (seconds < 3600) {
            return String.format("%dm%02ds", seconds / 60, seconds % 60);
        }
        long minutes = Math.round(seconds / 60.0);
        return String.format("%dh%02dm", minutes / 60, minutes % 60);
    }
}
