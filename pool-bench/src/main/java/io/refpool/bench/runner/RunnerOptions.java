package io.refpool.bench.runner;

import java.nio.file.Path;
import java.util.List;

/**
 * What one invocation of the runner was asked to do, after parsing and defaults.
 *
 * <pre>{@code
 * RunnerOptions options = OptionsParser.parse(List.of("mutex", "--threads", "1,8"));
 * options.suites();   // [MUTEX]
 * options.threads();  // [1, 8]
 * }</pre>
 *
 * @param command run the suites, print the help, or list the benchmarks
 * @param suites the suites asked for, in order, without duplicates; the floor runs in any case
 * @param suitesNamed whether the suites came from the command line rather than the default
 * @param profile the measurement profile
 * @param threads the thread counts of {@code @Scales} benchmarks, ascending, distinct
 * @param out the directory the result files go to
 */
record RunnerOptions(
        Command command, List<Suite> suites, boolean suitesNamed, Profile profile, List<Integer> threads, Path out) {

    /** The three things an invocation can do. */
    enum Command {
        RUN,
        HELP,
        LIST
    }

    RunnerOptions {
        suites = List.copyOf(suites);
        threads = List.copyOf(threads);
    }
}
