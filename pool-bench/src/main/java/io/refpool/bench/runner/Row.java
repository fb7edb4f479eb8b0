package io.refpool.bench.runner;

import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.openjdk.jmh.annotations.Mode;

/**
 * One line of a report: a benchmark at one combination of its non-{@code impl} parameters and one
 * thread count, measured once per implementation.
 *
 * <pre>{@code
 * var row = new Row("attach", "io.refpool.bench.AttachBenchmark", "nested", Mode.Throughput,
 *         new TreeMap<>(Map.of("state", "sparse")), 2, true, List.of("refpool", "swap-flag"), List.of());
 * row.label();   // "nested state=sparse"
 * }</pre>
 *
 * @param suite the suite's command name
 * @param benchmarkClass the JMH class, fully qualified
 * @param benchmark the method (or group) name
 * @param mode the JMH mode
 * @param params the non-{@code impl} parameters, by name
 * @param threads the total benchmark threads
 * @param scales whether the thread count came from {@code --threads} (then the runner sets it)
 * @param impls the implementations, refpool first; empty for a single-implementation row
 * @param roles the methods of a {@code @Group} benchmark (empty otherwise), each reported on a
 *     line of its own after the group's, see {@link #role}
 */
record Row(
        String suite,
        String benchmarkClass,
        String benchmark,
        Mode mode,
        SortedMap<String, String> params,
        int threads,
        boolean scales,
        List<String> impls,
        List<String> roles) {

    Row {
        params = Collections.unmodifiableSortedMap(new TreeMap<>(params));
        impls = List.copyOf(impls);
        roles = List.copyOf(roles);
    }

    /**
     * The line of one method of this group row: the same runs, read from the result JMH keeps for
     * that method alone (its threads' score and, when sampled, percentiles). It is never run by
     * itself.
     */
    Row role(String method) {
        return new Row(suite, benchmarkClass, method, mode, params, threads, scales, impls, List.of());
    }

    /** Throughput: a higher score is better. Every other mode reports a time: lower is better. */
    boolean higherIsBetter() {
        return mode == Mode.Throughput;
    }

    /** The parameters as {@code name=value} words, e.g. "callbacks=8 state=sparse". */
    String paramsText() {
        return params.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" "));
    }

    /** The benchmark and its parameters, e.g. "nested state=sparse". */
    String label() {
        return params.isEmpty() ? benchmark : benchmark + " " + paramsText();
    }

    /** The JMH benchmark name this row runs: class and method. */
    String jmhName() {
        return benchmarkClass + "." + benchmark;
    }
}
