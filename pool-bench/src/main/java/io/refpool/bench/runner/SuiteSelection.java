package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.List;

/**
 * Which suites an invocation runs, given what this build contains: the floor first, then every
 * suite asked for whose benchmark class exists.
 *
 * <pre>{@code
 * SuiteSelection selection = SuiteSelection.of(options, catalog);
 * if (selection.nothingToRun()) { ... exit 1 with selection.notBuilt() ... }
 * }</pre>
 *
 * <p>A suite whose class is not in the build yet is skipped with a line saying so. That is not an
 * error — the default suite still runs the floor — unless suites were named on the command line
 * and none of them (nor the floor, if named) can run.
 *
 * @param suites the suites to run, the floor first
 * @param notBuilt one line per skipped suite, e.g. "suite 'shared': no benchmarks in this build"
 * @param nothingToRun whether the named suites all lack benchmarks, so the invocation must fail
 */
record SuiteSelection(List<Suite> suites, List<String> notBuilt, boolean nothingToRun) {

    SuiteSelection {
        suites = List.copyOf(suites);
        notBuilt = List.copyOf(notBuilt);
    }

    static SuiteSelection of(RunnerOptions options, BenchmarkCatalog catalog) {
        List<Suite> suites = new ArrayList<>();
        List<String> notBuilt = new ArrayList<>();
        List<Suite> wanted = new ArrayList<>();
        wanted.add(Suite.FLOOR);
        options.suites().stream().filter(s -> s != Suite.FLOOR).forEach(wanted::add);
        for (Suite suite : wanted) {
            if (catalog.benchmarks(suite).isEmpty()) {
                notBuilt.add("suite '" + suite.commandName() + "': no benchmarks in this build");
            } else {
                suites.add(suite);
            }
        }
        boolean floorNamed = options.suites().contains(Suite.FLOOR);
        boolean namedRuns = suites.stream().anyMatch(s -> s != Suite.FLOOR || floorNamed);
        return new SuiteSelection(suites, notBuilt, options.suitesNamed() && !namedRuns);
    }
}
