package io.refpool.bench.runner;

import java.util.List;

/**
 * Everything one suite measured, ready for the table, the CSV and the chart.
 *
 * <pre>{@code
 * SuiteResult attach = new SuiteResult("attach", "AttachBenchmark", List.of(nestedSparse2, nestedSparse4));
 * }</pre>
 *
 * @param name the suite's command name, also the base name of its result files
 * @param benchmarkClass the simple name of the JMH class
 * @param rows the rows in report order
 */
record SuiteResult(String name, String benchmarkClass, List<RowResult> rows) {
    SuiteResult {
        rows = List.copyOf(rows);
    }
}
