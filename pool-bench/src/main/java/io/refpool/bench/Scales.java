package io.refpool.bench;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a JMH benchmark method whose thread count the runner sweeps.
 *
 * <pre>{@code
 * @Benchmark
 * @Scales
 * public void attachDetach(AttachState state) {
 *     try (Attachment a = state.pool.attach()) {}
 * }
 * }</pre>
 *
 * <p>The runner runs such a method once per thread count of {@code --threads} (default 1, 2, 4),
 * overriding any {@code @Threads} on it, and draws it in the suite's chart as throughput against
 * threads. Methods without this annotation keep the threads their JMH annotations give them
 * ({@code @Threads}, or {@code @Group} with {@code @GroupThreads}); it is meant for symmetric
 * benchmarks, where every thread runs the same method, not for {@code @Group} benchmarks.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Scales {}
