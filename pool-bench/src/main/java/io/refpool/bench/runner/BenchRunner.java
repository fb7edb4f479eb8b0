package io.refpool.bench.runner;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The benchmark runner behind {@code java -jar pool-bench.jar}: parses the command line, plans the
 * runs, executes them with progress, and prints and writes the reports. See {@link
 * io.refpool.bench.Main} for usage and the conventions benchmarks follow.
 *
 * <pre>{@code
 * int status = BenchRunner.run(new String[] {"mutex", "--smoke"}, System.out, System.err);
 * }</pre>
 *
 * <p>It never calls {@link System#exit}; {@link #run} returns the exit status: 0 when everything
 * ran, 1 when a run failed or none of the named suites exists in this build, 2 for a bad command
 * line (message and usage on stderr).
 */
public final class BenchRunner {
    private final RunnerOptions options;
    private final BenchmarkCatalog catalog;
    private final PrintStream out;
    private final PrintStream err;

    private BenchRunner(RunnerOptions options, BenchmarkCatalog catalog, PrintStream out, PrintStream err) {
        this.options = options;
        this.catalog = catalog;
        this.out = out;
        this.err = err;
    }

    /** Runs the command line and returns the process exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        RunnerOptions options;
        try {
            options = OptionsParser.parse(List.of(args));
        } catch (UsageException e) {
            err.println("pool-bench: " + e.getMessage());
            err.println();
            err.print(Usage.text());
            return 2;
        }
        if (options.command() == RunnerOptions.Command.HELP) {
            out.print(Usage.text());
            return 0;
        }
        BenchmarkCatalog catalog;
        try {
            catalog = BenchmarkCatalog.fromClassPath();
        } catch (RuntimeException e) {
            err.println("pool-bench: cannot read the benchmark list of this build: " + e.getMessage());
            return 1;
        }
        if (options.command() == RunnerOptions.Command.LIST) {
            List<Suite> suites = new ArrayList<>(List.of(Suite.FLOOR));
            (options.suitesNamed() ? options.suites() : Suite.comparisons())
                    .stream().filter(s -> s != Suite.FLOOR).forEach(suites::add);
            out.print(Listing.format(suites, catalog, options.threads()));
            return 0;
        }
        return new BenchRunner(options, catalog, out, err).runSuites();
    }

    private int runSuites() {
        SuiteSelection selection = SuiteSelection.of(options, catalog);
        if (selection.nothingToRun()) {
            selection.notBuilt().forEach(err::println);
            err.println("pool-bench: nothing to run");
            return 1;
        }
        selection.notBuilt().forEach(out::println);

        Profile profile = options.profile();
        List<SuitePlan> plans = new ArrayList<>();
        for (Suite suite : selection.suites()) {
            int forks = suite == Suite.FLOOR ? profile.floorForks() : profile.forks();
            plans.add(PlanBuilder.plan(suite, catalog.benchmarks(suite), forks, options.threads()));
        }
        int totalRuns = plans.stream().mapToInt(p -> p.runs().size()).sum();
        int cores = Runtime.getRuntime().availableProcessors();
        Path directory = options.out();
        out.println("refpool bench: " + names(selection.suites()) + "; profile " + profile.commandName() + " ("
                + profile.summary() + "); threads " + join(options.threads()));
        out.println(totalRuns + " JMH runs, expected about "
                + Durations.elapsed(Progress.estimate(totalRuns, profile.nominalRunTime())) + " on " + cores
                + " cores; results in " + directory);

        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            err.println("pool-bench: cannot create the result directory " + directory + ": " + e);
            return 1;
        }
        List<SuiteOutcome> outcomes = new ArrayList<>();
        List<Path> written = new ArrayList<>();
        ReportFiles files = new ReportFiles(directory, cores);
        int failedRuns = 0;
        try (PrintStream jmhLog =
                new PrintStream(Files.newOutputStream(directory.resolve("jmh.log")), true, StandardCharsets.UTF_8)) {
            Progress progress = new Progress(totalRuns, profile.nominalRunTime(), System::nanoTime, out);
            PlanExecutor executor = new PlanExecutor(new JmhInvoker(profile, jmhLog), progress, out);
            for (SuitePlan plan : plans) {
                SuiteOutcome outcome = executor.execute(plan);
                outcomes.add(outcome);
                failedRuns += outcome.failedRuns();
                written.addAll(files.write(outcome));
            }
        } catch (IOException e) {
            err.println("pool-bench: cannot write results to " + directory + ": " + e.getMessage());
            return 1;
        }

        TableFormatter tables = new TableFormatter(cores);
        for (SuiteOutcome outcome : outcomes) {
            out.println();
            out.print(tables.format(outcome.result()));
        }
        out.println();
        out.println("machine: " + cores + " cores (Runtime.availableProcessors); thread counts above that are"
                + " oversubscribed and marked *");
        out.println("files: " + written.stream().map(Path::toString).collect(Collectors.joining(", ")));
        if (failedRuns > 0) {
            err.println("pool-bench: " + failedRuns + " of " + totalRuns + " runs failed; see "
                    + directory.resolve("jmh.log"));
            return 1;
        }
        return 0;
    }

    private static String names(List<Suite> suites) {
        return suites.stream().map(Suite::commandName).collect(Collectors.joining(", "));
    }

    private static String join(List<Integer> values) {
        return values.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
}
