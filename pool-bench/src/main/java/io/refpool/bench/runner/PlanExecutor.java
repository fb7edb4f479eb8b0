package io.refpool.bench.runner;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.RunnerException;

/**
 * Executes a suite's runs in plan order, reporting progress, and assembles the results.
 *
 * <pre>{@code
 * PlanExecutor executor = new PlanExecutor(new JmhInvoker(profile, jmhLog), progress, System.out);
 * SuiteOutcome attach = executor.execute(attachPlan);
 * }</pre>
 *
 * <p>A failing run (an exception in the benchmark, a crashed fork) does not stop the suite: it is
 * reported on the console, the later forks of the same row and implementation are skipped (they
 * would fail alike and skew the ratio's pairing), and the row shows the implementation as failed.
 */
final class PlanExecutor {
    private final JmhInvoker invoker;
    private final Progress progress;
    private final PrintStream out;

    PlanExecutor(JmhInvoker invoker, Progress progress, PrintStream out) {
        this.invoker = invoker;
        this.progress = progress;
        this.out = out;
    }

    SuiteOutcome execute(SuitePlan plan) {
        Map<Row, Map<String, List<RunResult>>> forks = new LinkedHashMap<>();
        Set<PlannedRunKey> failed = new HashSet<>();
        List<RunResult> raw = new ArrayList<>();
        int failedRuns = 0;
        for (PlannedRun run : plan.runs()) {
            PlannedRunKey key = new PlannedRunKey(run.row(), implName(run));
            if (failed.contains(key)) {
                progress.skipped(run, "an earlier fork failed");
                failedRuns++;
                continue;
            }
            progress.starting(run);
            try {
                RunResult result = invoker.run(run);
                progress.finished();
                raw.add(result);
                forks.computeIfAbsent(run.row(), r -> new LinkedHashMap<>())
                        .computeIfAbsent(key.impl(), i -> new ArrayList<>())
                        .add(result);
            } catch (RunnerException | RuntimeException e) {
                progress.finished();
                failed.add(key);
                failedRuns++;
                out.println("    failed: " + rootMessage(e) + " (JMH's report: jmh.log in the result directory)");
            }
        }
        List<RowResult> rows = new ArrayList<>();
        for (Row row : plan.rows()) {
            Map<String, List<RunResult>> byImpl = forks.getOrDefault(row, Map.of());
            List<ImplResult> results = new ArrayList<>();
            List<String> failedImpls = new ArrayList<>();
            List<String> impls = row.impls().isEmpty() ? List.of(ImplResult.NO_IMPL) : row.impls();
            for (String impl : impls) {
                if (failed.contains(new PlannedRunKey(row, impl))) {
                    failedImpls.add(impl.isEmpty() ? row.benchmark() : impl);
                } else if (byImpl.containsKey(impl)) {
                    results.add(ResultAssembler.assemble(impl, byImpl.get(impl)));
                }
            }
            rows.add(new RowResult(row, results, failedImpls));
            for (String role : row.roles()) {
                List<ImplResult> roleResults = new ArrayList<>();
                for (String impl : impls) {
                    if (byImpl.containsKey(impl) && !failed.contains(new PlannedRunKey(row, impl))) {
                        ResultAssembler.assembleRole(impl, byImpl.get(impl), role)
                                .ifPresent(roleResults::add);
                    }
                }
                rows.add(new RowResult(row.role(role), roleResults, failedImpls));
            }
        }
        SuiteResult result =
                new SuiteResult(plan.suite().commandName(), plan.suite().simpleClassName(), rows);
        return new SuiteOutcome(result, raw, failedRuns);
    }

    private static String implName(PlannedRun run) {
        return run.impl().orElse(ImplResult.NO_IMPL);
    }

    /** The innermost cause; JMH wraps the benchmark's own exception as a suppressed one. */
    private static String rootMessage(Throwable error) {
        Throwable cause = error;
        while (true) {
            if (cause.getCause() != null && cause.getCause() != cause) {
                cause = cause.getCause();
            } else if (cause.getSuppressed().length > 0) {
                cause = cause.getSuppressed()[0];
            } else {
                break;
            }
        }
        String message = cause.getMessage();
        return cause.getClass().getSimpleName()
                + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    }

    /** A row and one implementation of it: the unit that fails together. */
    private record PlannedRunKey(Row row, String impl) {}
}
