package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The text of {@code --list}: per suite, every benchmark with its mode, threads, implementations
 * and other parameters.
 *
 * <pre>{@code
 * System.out.print(Listing.format(List.of(Suite.FLOOR, Suite.MUTEX), catalog, List.of(1, 2, 4)));
 * //  floor (FloorBenchmark)
 * //    acquireLoad  avgt  threads 1,2,4 (@Scales)
 * }</pre>
 */
final class Listing {
    private Listing() {}

    static String format(List<Suite> suites, BenchmarkCatalog catalog, List<Integer> threads) {
        StringBuilder text = new StringBuilder();
        for (Suite suite : suites) {
            List<BenchmarkDescriptor> benchmarks = catalog.benchmarks(suite);
            text.append(suite.commandName())
                    .append(" (")
                    .append(suite.simpleClassName())
                    .append(")");
            if (benchmarks.isEmpty()) {
                text.append(": no benchmarks in this build\n");
                continue;
            }
            text.append('\n');
            int width =
                    benchmarks.stream().mapToInt(b -> b.method().length()).max().orElse(0);
            for (BenchmarkDescriptor benchmark : benchmarks) {
                List<String> words = new ArrayList<>();
                words.add(String.format(
                        "  %-" + width + "s  %-6s",
                        benchmark.method(),
                        benchmark.mode().shortLabel()));
                words.add(
                        benchmark.scales()
                                ? "threads " + join(threads) + " (@Scales)"
                                : "threads " + benchmark.threads());
                if (!benchmark.impls().isEmpty()) {
                    words.add("impl=" + String.join(",", benchmark.impls()));
                }
                for (Map.Entry<String, List<String>> param :
                        benchmark.rowParams().entrySet()) {
                    words.add(param.getKey() + "=" + String.join(",", param.getValue()));
                }
                text.append(String.join("  ", words)).append('\n');
            }
        }
        return text.toString();
    }

    private static String join(List<Integer> values) {
        return values.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
