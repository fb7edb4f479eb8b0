package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.openjdk.jmh.annotations.Mode;

/**
 * One JMH benchmark method in one mode, as the runner needs to know it: its declared parameters,
 * the threads its annotations give it, and whether it is swept over {@code --threads}.
 *
 * <pre>{@code
 * var d = new BenchmarkDescriptor("io.refpool.bench.MutexBenchmark", "lockUnlock", Mode.Throughput,
 *         new TreeMap<>(Map.of("impl", List.of("reentrant-lock", "refpool"))), 1, true, List.of());
 * d.impls();   // [refpool, reentrant-lock]: refpool first, then the declared order
 * }</pre>
 *
 * @param className the benchmark class, fully qualified
 * @param method the benchmark method, or the group name of a {@code @Group} benchmark
 * @param mode the JMH mode of this entry (a method with several modes yields several descriptors)
 * @param params every {@code @Param} by name, values in declared order, {@code impl} included
 * @param threads the total threads JMH gives it by its annotations
 * @param scales whether the method carries {@code @Scales}
 * @param roles the methods of a {@code @Group} benchmark, in JMH's order (empty otherwise): the
 *     report shows each one's own score and percentiles under the group's
 */
record BenchmarkDescriptor(
        String className,
        String method,
        Mode mode,
        SortedMap<String, List<String>> params,
        int threads,
        boolean scales,
        List<String> roles) {

    /** The parameter that selects the implementation under test. */
    static final String IMPL = "impl";

    /** The {@code impl} value that is refpool; every other value is a peer or a baseline. */
    static final String REFPOOL = "refpool";

    BenchmarkDescriptor {
        TreeMap<String, List<String>> copy = new TreeMap<>();
        params.forEach((name, values) -> copy.put(name, List.copyOf(values)));
        params = Collections.unmodifiableSortedMap(copy);
        roles = List.copyOf(roles);
    }

    /** The implementations to compare, refpool first; empty for a single-implementation benchmark. */
    List<String> impls() {
        List<String> declared = params.getOrDefault(IMPL, List.of());
        List<String> ordered = new ArrayList<>();
        if (declared.contains(REFPOOL)) {
            ordered.add(REFPOOL);
        }
        declared.stream().filter(impl -> !impl.equals(REFPOOL)).forEach(ordered::add);
        return List.copyOf(ordered);
    }

    /** Every parameter except {@code impl}: these become part of a row's key. */
    SortedMap<String, List<String>> rowParams() {
        TreeMap<String, List<String>> rest = new TreeMap<>(params);
        rest.remove(IMPL);
        return Collections.unmodifiableSortedMap(rest);
    }
}
