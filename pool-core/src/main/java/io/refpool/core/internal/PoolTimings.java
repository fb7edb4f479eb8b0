package io.refpool.core.internal;

import java.util.Arrays;
import java.util.Objects;

/**
 * Where a pool built with {@code recordTimings(true)} sends its durations: to each recorder added
 * (a meter binder), none at first. A pool without timings has no instance, so its request path reads
 * no clock.
 *
 * <pre>{@code
 * PoolTimings timings = pool.timings();
 * timings.add((timing, nanos) -> System.out.println(timing + " " + nanos));
 * }</pre>
 */
public final class PoolTimings {
    /** What a duration measures. */
    public enum Timing {
        /** An acquire, until its handle is returned (a creation waited for included); for a call, until its function starts, less its section wait. */
        OBJECT_WAIT,
        /** A wait for an object's section ({@code PER_OBJECT} mode). */
        SECTION_WAIT,
        /** A call's function, or a handle from acquire to close. */
        USE,
        /** The factory, for an object it returned. */
        CREATION
    }

    /** Receives durations; must not block. */
    @FunctionalInterface
    public interface Recorder {
        /**
         * Records one duration.
         *
         * @param timing what it measures
         * @param nanos how long, in nanoseconds
         */
        void record(Timing timing, long nanos);
    }

    private static final Recorder[] NONE = {};

    private volatile Recorder[] recorders = NONE;

    PoolTimings() {}

    /**
     * Adds a recorder.
     *
     * @param recorder the recorder
     */
    public synchronized void add(Recorder recorder) {
        Objects.requireNonNull(recorder, "recorder");
        Recorder[] now = Arrays.copyOf(recorders, recorders.length + 1);
        now[now.length - 1] = recorder;
        recorders = now;
    }

    /**
     * Removes a recorder added before; one not added is ignored.
     *
     * @param recorder the recorder
     */
    public synchronized void remove(Recorder recorder) {
        Recorder[] now = recorders;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == recorder) {
                Recorder[] less = new Recorder[now.length - 1];
                System.arraycopy(now, 0, less, 0, i);
                System.arraycopy(now, i + 1, less, i, now.length - i - 1);
                recorders = less;
                return;
            }
        }
    }

    /** Records the time since {@code startNanos} ({@code System.nanoTime()}). */
    void since(Timing timing, long startNanos) {
        record(timing, System.nanoTime() - startNanos);
    }

    /**
     * Records {@code nanos} to every recorder. The recorders are the library's meter binders; one
     * that throws anyway, an {@code Error} included, is skipped, as the caller is closing a handle,
     * publishing a creation or ending a call and must not fail for a meter.
     */
    void record(Timing timing, long nanos) {
        for (Recorder recorder : recorders) {
            try {
                recorder.record(timing, Math.max(0, nanos));
            } catch (Throwable skipped) {
                // a meter's failure is not the caller's: a handle's reference or a new object would be lost
                Waits.keepInterrupt(skipped);
            }
        }
    }
}
