package io.refpool.bench.runner;

import io.refpool.bench.Scales;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * The benchmarks this build contains, read from the list JMH's annotation processor generates
 * ({@code META-INF/BenchmarkList}), grouped by benchmark class.
 *
 * <pre>{@code
 * BenchmarkCatalog catalog = BenchmarkCatalog.fromClassPath();
 * List<BenchmarkDescriptor> mutex = catalog.benchmarks(Suite.MUTEX);   // empty if not built yet
 * }</pre>
 *
 * <p>Reading JMH's own list rather than scanning classes means the runner sees exactly what JMH
 * will run: parameters declared in any {@code @State} class, one entry per mode, thread groups.
 * Only {@code @Scales} comes from reflection, since JMH does not know it.
 */
final class BenchmarkCatalog {
    private final Map<String, List<BenchmarkDescriptor>> byClass;

    BenchmarkCatalog(List<BenchmarkDescriptor> benchmarks) {
        Map<String, List<BenchmarkDescriptor>> grouped = new LinkedHashMap<>();
        benchmarks.stream()
                .sorted(Comparator.comparing(BenchmarkDescriptor::method)
                        .thenComparing(d -> d.mode().ordinal()))
                .forEach(d -> grouped.computeIfAbsent(d.className(), c -> new ArrayList<>())
                        .add(d));
        grouped.replaceAll((c, list) -> List.copyOf(list));
        this.byClass = Map.copyOf(grouped);
    }

    /**
     * Reads the generated benchmark list from the class path.
     *
     * @throws IllegalStateException if the build holds no benchmark list at all
     */
    static BenchmarkCatalog fromClassPath() {
        PrintStream discard = new PrintStream(OutputStream.nullOutputStream());
        List<BenchmarkDescriptor> benchmarks = new ArrayList<>();
        for (BenchmarkListEntry entry : BenchmarkList.defaultList()
                .getAll(OutputFormatFactory.createFormatInstance(discard, VerboseMode.SILENT), List.of())) {
            benchmarks.add(describe(entry));
        }
        return new BenchmarkCatalog(benchmarks);
    }

    /** The benchmarks of the suite's class, by method then mode; empty when the class is absent. */
    List<BenchmarkDescriptor> benchmarks(Suite suite) {
        return byClass.getOrDefault(suite.benchmarkClass(), List.of());
    }

    private static BenchmarkDescriptor describe(BenchmarkListEntry entry) {
        String className = entry.getUserClassQName();
        String method = entry.getUsername().substring(className.length() + 1);
        int[] groups = entry.getThreadGroups();
        boolean grouped = groups.length > 1;
        int groupSize = Arrays.stream(groups).sum();
        int declared = entry.getThreads().orElse(1);
        if (declared == Threads.MAX) {
            declared = Runtime.getRuntime().availableProcessors();
        }
        // JMH rounds the thread count up to whole groups
        int threads = (declared + groupSize - 1) / groupSize * groupSize;
        Map<String, List<String>> params = new TreeMap<>();
        entry.getParams().orElse(Map.of()).forEach((name, values) -> params.put(name, List.of(values)));
        boolean scales = !grouped && isAnnotatedScales(className, method);
        List<String> roles = grouped ? List.copyOf(entry.getThreadGroupLabels().orElse(List.of())) : List.of();
        return new BenchmarkDescriptor(
                className, method, entry.getMode(), new TreeMap<>(params), threads, scales, roles);
    }

    private static boolean isAnnotatedScales(String className, String method) {
        Class<?> benchmarkClass;
        try {
            benchmarkClass = Class.forName(className, false, BenchmarkCatalog.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(
                    "benchmark list names class '" + className + "', which is not on the class path", e);
        }
        for (Method candidate : benchmarkClass.getMethods()) {
            if (candidate.getName().equals(method) && candidate.isAnnotationPresent(Scales.class)) {
                return true;
            }
        }
        return false;
    }
}
