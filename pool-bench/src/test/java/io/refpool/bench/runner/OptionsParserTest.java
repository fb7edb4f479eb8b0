package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.bench.runner.RunnerOptions.Command;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OptionsParserTest {

    private static RunnerOptions parse(String... args) throws UsageException {
        return OptionsParser.parse(List.of(args));
    }

    @Test
    void noArgumentsRunsAttachQuicklyAtOneTwoFourThreadsIntoTarget() throws UsageException {
        RunnerOptions options = parse();
        assertEquals(Command.RUN, options.command());
        assertEquals(List.of(Suite.ATTACH), options.suites());
        assertFalse(options.suitesNamed());
        assertEquals(Profile.QUICK, options.profile());
        assertEquals(List.of(1, 2, 4), options.threads());
        assertEquals(Path.of("pool-bench", "target", "results"), options.out());
    }

    @Test
    void everySuiteIsSelectableByName() throws UsageException {
        for (Suite suite : Suite.values()) {
            RunnerOptions options = parse(suite.commandName());
            assertEquals(List.of(suite), options.suites());
            assertTrue(options.suitesNamed());
        }
    }

    @Test
    void allExpandsToEveryComparisonSuiteWithoutDuplicates() throws UsageException {
        assertEquals(Suite.comparisons(), parse("all").suites());
        assertEquals(
                Suite.comparisons(),
                parse("mutex", "all", "mutex").suites().stream().sorted().toList());
        assertEquals(
                List.of(Suite.MUTEX, Suite.SHARED),
                parse("mutex", "shared", "mutex").suites());
    }

    @Test
    void profilesAreChosenByFlag() throws UsageException {
        assertEquals(Profile.QUICK, parse("--quick").profile());
        assertEquals(Profile.FULL, parse("--full").profile());
        assertEquals(Profile.SMOKE, parse("--smoke").profile());
        assertEquals(Profile.FULL, parse("--full", "--full").profile());
    }

    @Test
    void smokeDefaultsToEverySuiteAtTwoThreads() throws UsageException {
        RunnerOptions smoke = parse("--smoke");
        assertEquals(Suite.comparisons(), smoke.suites());
        assertFalse(smoke.suitesNamed());
        assertEquals(List.of(2), smoke.threads());
        assertEquals(List.of(Suite.MUTEX), parse("--smoke", "mutex").suites());
        assertEquals(List.of(1, 8), parse("--smoke", "--threads", "8,1").threads());
    }

    @Test
    void threadsAreSortedAndDeduplicatedInBothSpellings() throws UsageException {
        assertEquals(List.of(1, 2, 8), parse("--threads", "8,2,1,2").threads());
        assertEquals(List.of(3, 16), parse("--threads=16, 3").threads());
        assertEquals(List.of(1024), parse("--threads", "1024").threads());
    }

    @Test
    void outTakesADirectoryInBothSpellings() throws UsageException {
        assertEquals(Path.of("results"), parse("--out", "results").out());
        assertEquals(Path.of("out dir", "x"), parse("--out=out dir/x").out());
    }

    @Test
    void listAndHelpAreCommands() throws UsageException {
        assertEquals(Command.LIST, parse("--list", "mutex").command());
        assertEquals(Command.HELP, parse("--help").command());
        assertEquals(Command.HELP, parse("-h").command());
        assertEquals(Command.HELP, parse("--bogus", "--help").command());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "--bogus",
                "-x",
                "bogus-suite",
                "--threads",
                "--threads 0",
                "--threads -1",
                "--threads 1,,2",
                "--threads abc",
                "--threads 1.5",
                "--threads 1025",
                "--threads 99999999999",
                "--threads=",
                "--threads 1 --threads 2",
                "--out",
                "--out=",
                "--out a --out b",
                "--quick --full",
                "--smoke --quick",
                "--quick=1",
                "--list=yes",
                "--list --out results",
                "--out=results attach --list",
                "all=1"
            })
    void badCommandLinesAreUsageErrors(String commandLine) {
        UsageException error = assertThrows(UsageException.class, () -> parse(commandLine.split(" ")));
        assertFalse(error.getMessage().isBlank());
    }

    @Test
    void usageErrorsNameTheCulprit() {
        assertTrue(assertThrows(UsageException.class, () -> parse("--threads", "0"))
                .getMessage()
                .contains("0"));
        assertTrue(assertThrows(UsageException.class, () -> parse("sharde"))
                .getMessage()
                .contains("unknown suite 'sharde'"));
        assertTrue(assertThrows(UsageException.class, () -> parse("--bogus"))
                .getMessage()
                .contains("unknown option '--bogus'"));
    }

    @Test
    void runnerExitsTwoWithMessageAndUsageOnStderrForABadOption() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = BenchRunner.run(new String[] {"--bogus"}, print(out), print(err));
        assertEquals(2, status);
        assertEquals("", out.toString(StandardCharsets.UTF_8));
        String stderr = err.toString(StandardCharsets.UTF_8);
        assertTrue(stderr.startsWith("pool-bench: unknown option '--bogus'"), stderr);
        assertTrue(stderr.contains("Usage: java -jar pool-bench/target/pool-bench.jar"), stderr);
    }

    @Test
    void runnerExitsZeroWithUsageOnStdoutForHelp() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = BenchRunner.run(new String[] {"--help"}, print(out), print(err));
        assertEquals(0, status);
        assertEquals("", err.toString(StandardCharsets.UTF_8));
        String help = out.toString(StandardCharsets.UTF_8);
        for (String expected : List.of(
                "Usage:",
                "--quick",
                "--full",
                "--smoke",
                "--threads",
                "--out",
                "--list",
                "attach",
                "SUITE.csv",
                "SUITE.svg",
                "SUITE.json",
                "@Param(\"impl\")",
                "@io.refpool.bench.Scales")) {
            assertTrue(help.contains(expected), "help lacks " + expected);
        }
    }

    private static PrintStream print(ByteArrayOutputStream bytes) {
        return new PrintStream(bytes, true, StandardCharsets.UTF_8);
    }
}
