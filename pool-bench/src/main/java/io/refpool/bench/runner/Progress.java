package io.refpool.bench.runner;

import java.io.PrintStream;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Prints one line per JMH run as it starts, with the time spent and an estimate of the time left.
 *
 * <pre>{@code
 * Progress progress = new Progress(36, Profile.QUICK.nominalRunTime(), System::nanoTime, System.out);
 * progress.starting(run);   // "[ 7/36] attach nested state=sparse threads=2 impl=swap-flag fork 1/2
 *                           //  elapsed 1m12s, ~2m40s left"
 * progress.finished();
 * }</pre>
 *
 * <p>Before the first run ends the estimate per run is the profile's warmup plus measurement plus
 * {@link #JVM_START_ESTIMATE}; afterwards it is the measured average of the runs so far, which
 * covers the JVM start, the profiler and the machine's load as they really are.
 */
final class Progress {
    /** A forked JVM's start and teardown with JMH's setup, on a small machine. */
    static final Duration JVM_START_ESTIMATE = Duration.ofMillis(800);

    private final int total;
    private final Duration nominalRunTime;
    private final LongSupplier nanoClock;
    private final PrintStream out;
    private final long startNanos;
    private final int width;
    private int started;
    private int finished;
    private long runStartNanos;
    private long measuredNanos;

    Progress(int total, Duration nominalRunTime, LongSupplier nanoClock, PrintStream out) {
        this.total = total;
        this.nominalRunTime = nominalRunTime;
        this.nanoClock = nanoClock;
        this.out = out;
        this.startNanos = nanoClock.getAsLong();
        this.width = String.valueOf(total).length();
    }

    /** The expected duration of {@code runs} runs before any has been measured. */
    static Duration estimate(int runs, Duration nominalRunTime) {
        return nominalRunTime.plus(JVM_START_ESTIMATE).multipliedBy(runs);
    }

    void starting(PlannedRun run) {
        started++;
        runStartNanos = nanoClock.getAsLong();
        Duration elapsed = Duration.ofNanos(runStartNanos - startNanos);
        out.printf(
                "[%" + width + "d/%d] %s  elapsed %s, ~%s left%n",
                started,
                total,
                run.describe(),
                Durations.elapsed(elapsed),
                Durations.elapsed(remaining()));
        out.flush();
    }

    void finished() {
        finished++;
        measuredNanos += nanoClock.getAsLong() - runStartNanos;
    }

    /** A run the runner did not start (an earlier fork of it failed); it counts as done at once. */
    void skipped(PlannedRun run, String reason) {
        started++;
        out.printf("[%" + width + "d/%d] %s  skipped: %s%n", started, total, run.describe(), reason);
        out.flush();
    }

    /** The estimate for the runs not finished yet, the one starting now included. */
    private Duration remaining() {
        int left = total - started + 1;
        if (finished == 0) {
            return estimate(left, nominalRunTime);
        }
        return Duration.ofNanos(measuredNanos / finished).multipliedBy(left);
    }
}
