package io.refpool.bench;

import io.refpool.bench.baseline.NaiveCancellationSource;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Registration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * What cancellation costs: refpool's {@link CancellationSource} against {@link
 * NaiveCancellationSource}, a registration list under one lock with a lock and a condition per
 * registration.
 *
 * <pre>{@code
 * java -cp pool-bench/target/pool-bench.jar org.openjdk.jmh.Main CancellationBenchmark -prof gc
 * }</pre>
 *
 * <ul>
 *   <li>{@code registerUnregister}: register a callback on a live source this thread owns, then
 *       unregister it — what a lock waiter pays for taking a token when it is granted before any
 *       cancellation.
 *   <li>{@code registerUnregisterShared}: the same on one source shared by two threads, so the
 *       registrations contend.
 *   <li>{@code registerOnCancelled}: register on a token that is already cancelled; the callback
 *       runs inline.
 *   <li>{@code createRegisterCancel}: create a source, register {@code callbacks} callbacks and
 *       cancel it, which runs them all. Building the source inside the measured operation keeps the
 *       row honest: a per-invocation setup would be timed by JMH around an operation of tens of
 *       nanoseconds, and a source can only be cancelled once.
 *   <li>{@code createRegister}: the same without the cancel, so that the difference of the two rows
 *       is the dispatch alone.
 * </ul>
 *
 * <p>Every callback increments a counter of its thread, so none of them is dead code. The
 * annotations below only matter when JMH runs the class directly.
 */
@Fork(2)
@State(Scope.Benchmark)
public class CancellationBenchmark extends AverageTimeDefaults {

    /** Which implementation a run measures; {@code refpool} comes first. */
    @Param({"refpool", "naive"})
    public String impl;

    private Subject subject;
    private Object cancelledSource;
    private Object sharedSource;

    @Setup
    public void setUp() {
        subject = Subject.named(impl);
        cancelledSource = subject.newSource();
        subject.cancel(cancelledSource);
        sharedSource = subject.newSource();
    }

    /** A source only this thread registers on, and the callback every row uses. */
    @State(Scope.Thread)
    public static class PerThread {
        Object source;
        long callbacksRun;
        final Runnable callback = () -> callbacksRun++;

        @Setup
        public void setUp(CancellationBenchmark benchmark) {
            source = benchmark.subject.newSource();
        }
    }

    /** How many callbacks a cancelled source holds. */
    @State(Scope.Thread)
    public static class Dispatch {
        @Param({"1", "8", "32", "256"})
        public int callbacks;
    }

    @Benchmark
    public boolean registerUnregister(PerThread thread) {
        return subject.unregister(subject.register(thread.source, thread.callback));
    }

    @Benchmark
    @Threads(2)
    public boolean registerUnregisterShared(PerThread thread) {
        return subject.unregister(subject.register(sharedSource, thread.callback));
    }

    @Benchmark
    public Object registerOnCancelled(PerThread thread) {
        return subject.register(cancelledSource, thread.callback);
    }

    @Benchmark
    public long createRegisterCancel(PerThread thread, Dispatch dispatch) {
        Object source = subject.newSource();
        for (int i = 0; i < dispatch.callbacks; i++) {
            subject.register(source, thread.callback);
        }
        subject.cancel(source);
        return thread.callbacksRun;
    }

    @Benchmark
    public Object createRegister(PerThread thread, Dispatch dispatch) {
        Object source = subject.newSource();
        for (int i = 0; i < dispatch.callbacks; i++) {
            subject.register(source, thread.callback);
        }
        return source;
    }

    /** The operations a row needs, over either implementation; a fork only ever loads one. */
    abstract static class Subject {
        abstract Object newSource();

        abstract Object register(Object source, Runnable callback);

        abstract boolean unregister(Object registration);

        abstract boolean cancel(Object source);

        static Subject named(String impl) {
            return switch (impl) {
                case "refpool" -> new Refpool();
                case "naive" -> new Naive();
                default -> throw new IllegalArgumentException("unknown impl '" + impl + "', expected refpool or naive");
            };
        }
    }

    private static final class Refpool extends Subject {
        @Override
        Object newSource() {
            return new CancellationSource();
        }

        @Override
        Object register(Object source, Runnable callback) {
            CancellationToken token = ((CancellationSource) source).token();
            return token.register(callback);
        }

        @Override
        boolean unregister(Object registration) {
            return ((Registration) registration).unregister();
        }

        @Override
        boolean cancel(Object source) {
            return ((CancellationSource) source).cancel();
        }
    }

    private static final class Naive extends Subject {
        @Override
        Object newSource() {
            return new NaiveCancellationSource();
        }

        @Override
        Object register(Object source, Runnable callback) {
            return ((NaiveCancellationSource) source).register(callback);
        }

        @Override
        boolean unregister(Object registration) {
            return ((NaiveCancellationSource.Registration) registration).unregister();
        }

        @Override
        boolean cancel(Object source) {
            return ((NaiveCancellationSource) source).cancel();
        }
    }
}
