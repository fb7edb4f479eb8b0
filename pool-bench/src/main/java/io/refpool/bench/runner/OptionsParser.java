package io.refpool.bench.runner;

import io.refpool.bench.runner.RunnerOptions.Command;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Turns the command line into {@link RunnerOptions}, applying the defaults; it never exits the JVM.
 *
 * <pre>{@code
 * RunnerOptions options = OptionsParser.parse(List.of("all", "--full", "--out", "results"));
 * }</pre>
 *
 * <p>Grammar: any number of suite names ({@code attach}, ..., {@code floor}, {@code all}) and the
 * options {@code --quick | --full | --smoke}, {@code --threads N[,N...]}, {@code --out DIR},
 * {@code --list}, {@code --help}. Options taking a value accept it as the next word or after
 * {@code =}. {@code --help} wins over everything else, so it works even on a broken command line.
 * Without suite names the runner runs {@code attach}, or every suite under {@code --smoke}.
 */
final class OptionsParser {
    /** The default result directory, relative to the working directory (the project root). */
    static final Path DEFAULT_OUT = Path.of("pool-bench", "target", "results");

    /** More threads than this is a typo, not a benchmark. */
    static final int MAX_THREADS = 1024;

    private OptionsParser() {}

    static RunnerOptions parse(List<String> args) throws UsageException {
        if (args.contains("--help") || args.contains("-h")) {
            return new RunnerOptions(
                    Command.HELP, List.of(), false, Profile.QUICK, Profile.QUICK.defaultThreads(), DEFAULT_OUT);
        }
        Command command = Command.RUN;
        Set<Suite> suites = new LinkedHashSet<>();
        Profile profile = null;
        List<Integer> threads = null;
        Path out = null;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            int eq = arg.indexOf('=');
            boolean isOption = arg.startsWith("-");
            String name = isOption && eq >= 0 ? arg.substring(0, eq) : arg;
            String inline = isOption && eq >= 0 ? arg.substring(eq + 1) : null;
            switch (name) {
                case "--list", "--quick", "--full", "--smoke" -> {
                    if (inline != null) {
                        throw new UsageException(name + " takes no value (got '" + arg + "')");
                    }
                    if (name.equals("--list")) {
                        command = Command.LIST;
                    } else {
                        Profile chosen = Profile.valueOf(name.substring(2).toUpperCase(Locale.ROOT));
                        if (profile != null && profile != chosen) {
                            throw new UsageException("choose one profile: --" + profile.commandName() + " and " + name
                                    + " were both given");
                        }
                        profile = chosen;
                    }
                }
                case "--threads", "--out" -> {
                    String value = inline;
                    if (value == null) {
                        value = valueAfter(args, i, name);
                        i++;
                    }
                    if (name.equals("--threads")) {
                        if (threads != null) {
                            throw new UsageException("--threads was given twice");
                        }
                        threads = parseThreads(value);
                    } else {
                        if (out != null) {
                            throw new UsageException("--out was given twice");
                        }
                        out = parseOut(value);
                    }
                }
                case "all" -> suites.addAll(Suite.comparisons());
                default -> {
                    if (isOption) {
                        throw new UsageException("unknown option '" + arg + "'");
                    }
                    suites.add(Suite.byName(arg)
                            .orElseThrow(() -> new UsageException(
                                    "unknown suite '" + arg + "' (choose from " + Suite.names() + ", all)")));
                }
            }
        }
        if (command == Command.LIST && out != null) {
            throw new UsageException("--out " + out + " was given with --list, which runs nothing and writes no file");
        }
        Profile chosenProfile = profile == null ? Profile.QUICK : profile;
        boolean named = !suites.isEmpty();
        if (!named) {
            suites.addAll(chosenProfile == Profile.SMOKE ? Suite.comparisons() : List.of(Suite.ATTACH));
        }
        return new RunnerOptions(
                command,
                new ArrayList<>(suites),
                named,
                chosenProfile,
                threads == null ? chosenProfile.defaultThreads() : threads,
                out == null ? DEFAULT_OUT : out);
    }

    private static String valueAfter(List<String> args, int index, String option) throws UsageException {
        if (index + 1 >= args.size() || args.get(index + 1).startsWith("--")) {
            throw new UsageException(option + " needs a value");
        }
        return args.get(index + 1);
    }

    static List<Integer> parseThreads(String value) throws UsageException {
        if (value.isBlank()) {
            throw new UsageException("--threads needs a comma-separated list of thread counts, e.g. 1,2,4");
        }
        Set<Integer> counts = new TreeSet<>();
        for (String item : value.split(",", -1)) {
            String trimmed = item.trim();
            if (!trimmed.matches("[0-9]+")) {
                throw new UsageException(
                        "--threads: '" + trimmed + "' is not a positive whole number (in '" + value + "')");
            }
            String digits = trimmed.replaceFirst("^0+(?=.)", "");
            int count = digits.length() > 9 ? Integer.MAX_VALUE : Integer.parseInt(digits);
            if (count < 1 || count > MAX_THREADS) {
                throw new UsageException("--threads: " + trimmed + " is outside 1.." + MAX_THREADS);
            }
            counts.add(count);
        }
        return List.copyOf(counts);
    }

    private static Path parseOut(String value) throws UsageException {
        if (value.isBlank()) {
            throw new UsageException("--out needs a directory");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new UsageException("--out: '" + value + "' is not a valid path: " + e.getReason());
        }
    }
}
