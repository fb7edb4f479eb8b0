package io.refpool.bench.runner;

import java.util.List;

/**
 * The rows of one suite and the JMH runs that measure them, in execution order.
 *
 * <pre>{@code
 * SuitePlan plan = PlanBuilder.plan(Suite.MUTEX, descriptors, 2, List.of(1, 2, 4));
 * plan.runs().size();   // rows × forks × implementations
 * }</pre>
 *
 * @param suite the suite
 * @param rows the report's rows, in report order
 * @param runs the runs, interleaved: per row, fork 1 of every implementation, then fork 2, ...
 */
record SuitePlan(Suite suite, List<Row> rows, List<PlannedRun> runs) {
    SuitePlan {
        rows = List.copyOf(rows);
        runs = List.copyOf(runs);
    }
}
