package io.refpool.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The defaults of the benchmarks that time one operation: average time in ns/op, 3 × 1 s of
 * warmup, 5 × 1 s of measurement. JMH applies a superclass's annotations to the benchmarks of its
 * subclasses, and a subclass's or a method's own annotation wins.
 *
 * <pre>{@code
 * @Fork(1)
 * public class MutexBenchmark extends AverageTimeDefaults { ... }
 * }</pre>
 *
 * <p>They only matter when JMH runs a class directly: the runner sets forks and iterations from its
 * profile.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public abstract class AverageTimeDefaults {}
