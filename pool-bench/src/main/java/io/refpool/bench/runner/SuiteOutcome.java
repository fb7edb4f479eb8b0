package io.refpool.bench.runner;

import java.util.List;
import org.openjdk.jmh.results.RunResult;

/**
 * What executing one suite's plan produced: the results for the reports, JMH's raw results for
 * the JSON file, and how many runs failed.
 *
 * <pre>{@code
 * SuiteOutcome outcome = executor.execute(plan);
 * new TableFormatter(cores).format(outcome.result());
 * }</pre>
 *
 * @param result the assembled results
 * @param rawResults every successful JMH run, in execution order
 * @param failedRuns the runs that failed or were skipped after a failure
 */
record SuiteOutcome(SuiteResult result, List<RunResult> rawResults, int failedRuns) {
    SuiteOutcome {
        rawResults = List.copyOf(rawResults);
    }
}
