package io.refpool.core.guide;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.refpool.core.ObjectCreationException;
import io.refpool.core.RefPool;
import io.refpool.testkit.TestKit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The code of {@code docs/guide.md}, compiled and run. Each sample is a region between {@code //
 * tag::name[]} and {@code // end::name[]} of a source file of this package (whole files, imports
 * included, for the types); {@link #theGuideShowsTheseSamplesVerbatim} checks that every {@code
 * java} block of the guide, marked {@code <!-- sample: name -->}, is that region, so the guide
 * cannot drift from code that works.
 */
public class GuideSamplesTest {
    private static final Path GUIDE = Path.of("../docs/guide.md");
    private static final Path PACKAGE = Path.of("src/test/java/io/refpool/core/guide");
    private static final List<String> SAMPLE_FILES = List.of(
            "LuaTenant.java",
            "Plugin.java",
            "TenantHost.java",
            "Preludes.java",
            "HostExample.java",
            "TenantState.java",
            "GuardedHost.java",
            "LifecycleSamples.java");

    private final List<LuaTenant> opened = new CopyOnWriteArrayList<>();
    private final TenantHost host = new TenantHost(opened::add);

    @AfterEach
    void everyInterpreterClosedExactlyOnce() {
        host.close();
        assertTrue(opened.stream().allMatch(LuaTenant::isClosed), "closed: a second close would have thrown");
        assertEquals(List.of(), host.errors(), "no failed disposer, leak or handle open at close");
    }

    @Test
    void aRunawayScriptIsStoppedByItsLimitAndItsInterpreterReplaced() {
        List<String> disposed = new CopyOnWriteArrayList<>();
        try (GuardedHost guarded = new GuardedHost(disposed::add)) {
            assertEquals("2", guarded.run("tenant-7", "return 1 + 1", Duration.ofSeconds(5)));
            org.luaj.vm2.LuaError stopped = assertThrows(
                    org.luaj.vm2.LuaError.class,
                    () -> guarded.run("tenant-7", "while true do end", Duration.ofMillis(50)));
            assertTrue(stopped.getMessage().contains("stopped by the host"), stopped::getMessage);
            assertEquals(
                    List.of("tenant-7: RELEASED", "tenant-7: INTERRUPTED"),
                    disposed,
                    "retired, disposed after the call");
            assertEquals("3", guarded.run("tenant-7", "return 1 + 2", Duration.ofSeconds(5)), "a fresh interpreter");
        }
        assertEquals(List.of("tenant-7: RELEASED", "tenant-7: INTERRUPTED", "tenant-7: RELEASED"), disposed);
    }

    @Test
    void aReloadedTenantGetsAFreshInterpreterAndTrimmingClosesIdleOnes() throws Exception {
        assertEquals("1", host.run("tenant-7", "count = (count or 0) + 1; return count"));
        assertEquals("2", host.run("tenant-7", "count = count + 1; return count"), "the interpreter idled");
        assertTrue(host.reload("tenant-7"));
        assertTrue(opened.get(0).isClosed(), "idle when retired: closed at once");
        assertEquals("1", host.run("tenant-7", "count = (count or 0) + 1; return count"), "a fresh interpreter");
        host.run("tenant-8", "return 1");
        assertEquals(2, host.trim(), "both idle interpreters closed");
        assertEquals(0, host.settledStats().idle());
        assertEquals(3, opened.size());
    }

    @Test
    void aTenantsStateSavedOnCloseAndRestoredOnOpenLosesNoIncrement() throws Exception {
        try (TenantState tenants = new TenantState()) {
            String[] names = {"acme", "globex", "initech"};
            List<TestKit.Forked<Void>> plugins = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                plugins.add(TestKit.forkRun("plugin-" + p, () -> {
                    for (int i = 0; i < 300; i++) {
                        tenants.increment(names[i % names.length]);
                    }
                }));
            }
            TestKit.Forked<Void> trimmer = TestKit.forkRun("trimmer", () -> {
                for (int i = 0; i < 300; i++) {
                    tenants.trim(); // each trim closes the idle interpreters: their state is saved
                }
            });
            for (TestKit.Forked<Void> plugin : plugins) {
                plugin.join();
            }
            trimmer.join();
            tenants.close();
            long total = 0;
            for (String name : names) {
                total += tenants.saved(name);
            }
            assertEquals(600, total, "every increment reached the saved state");
        }
    }

    @Test
    void aPreludeThatCannotBeReadFailsTheAcquireAndTheNextOneReadsItAgain(@TempDir Path preludes) throws Exception {
        RefPool<String, LuaTenant> pool = Preludes.interpreters(preludes);
        try {
            ObjectCreationException missing = assertThrows(
                    ObjectCreationException.class, () -> pool.call("acme", lua -> lua.eval("return greeting")));
            assertInstanceOf(NoSuchFileException.class, missing.getCause());
            Files.writeString(preludes.resolve("acme.lua"), "greeting = 'hello'");
            assertEquals("hello", pool.call("acme", lua -> lua.eval("return greeting")), "the factory ran again");
        } finally {
            pool.close();
        }
    }

    @Test
    void theMetersCountWhatTheHostDid() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        host.bindMetrics(registry);
        assertEquals("3", host.run("acme", "return 1 + 2"));
        host.reload("acme");
        assertEquals(
                1.0,
                registry.get("refpool.creations")
                        .tag("pool", "lua")
                        .functionCounter()
                        .count());
        assertEquals(
                1.0,
                registry.get("refpool.disposals")
                        .tags("pool", "lua", "cause", "INVALIDATED")
                        .functionCounter()
                        .count());
        assertEquals(
                0.0,
                registry.get("refpool.objects")
                        .tags("pool", "lua", "state", "idle")
                        .gauge()
                        .value());
    }

    @Test
    void aTimedRunTakesAFreeInterpreterAtOnce() {
        assertEquals("42", host.runWithin("tenant-7", "return 6 * 7", Duration.ofMillis(200)));
        assertEquals(1, opened.size());
    }

    @Test
    void twoPluginsOnTwoThreadsLoseNoUpdate() throws Exception {
        assertEquals("2000", HostExample.countOnTwoThreads(host));
        assertEquals(1, opened.size(), "one interpreter for the tenant");
    }

    @Test
    void aWorkerUsesTheInterpreterAttachedInItsSectionAndClosesItsHandleThere() throws Exception {
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try {
            assertEquals(
                    "42",
                    host.runOnWorker("tenant-7", "return 6 * 7", worker).get(BOUND.toSeconds(), TimeUnit.SECONDS));
        } finally {
            worker.shutdown();
        }
        eventually().until(() -> host.stats().live() == 0); // the worker's close, applied by the drainer
        assertEquals("1", host.run("tenant-7", "count = (count or 0) + 1; return count"), "the interpreter idled");
        assertEquals(1, opened.size());
    }

    /** Counted down by a Lua script once it is inside its interpreter (through luajava). */
    private static volatile CountDownLatch inside;
    /** What that script waits for before it leaves. */
    private static volatile CountDownLatch leave;

    /** Called from Lua: says the script is inside the interpreter, then waits to be let go. */
    public static String holdTheInterpreter() throws InterruptedException {
        inside.countDown();
        return leave.await(BOUND.toSeconds(), TimeUnit.SECONDS) ? "done" : "never let go";
    }

    @Test
    void aRequestGivesUpAtItsDeadlineWhileAnotherPluginIsInsideTheInterpreter() throws Exception {
        assertEquals("42", HostExample.askWithDeadline(host, "tenant-7", Duration.ofSeconds(5)));
        inside = new CountDownLatch(1);
        leave = new CountDownLatch(1);
        TestKit.Forked<String> busy = fork(
                "busy plugin",
                () -> host.run(
                        "tenant-7",
                        "return luajava.bindClass('" + GuideSamplesTest.class.getName() + "'):holdTheInterpreter()"));
        assertTrue(inside.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the busy plugin is inside: " + busy.outcome);
        assertEquals("gave up after PT0.05S", HostExample.askWithDeadline(host, "tenant-7", Duration.ofMillis(50)));
        leave.countDown();
        assertEquals("done", busy.join());
        assertEquals("42", HostExample.askWithDeadline(host, "tenant-7", Duration.ofSeconds(5)));
    }

    @Test
    void theLifecycleSamplesCheckAgeAndWarmInterpreters() throws Exception {
        try (RefPool<String, LuaTenant> checked = LifecycleSamples.checked()) {
            LuaTenant first = checked.call("tenant-1", lua -> lua);
            assertSame(first, checked.call("tenant-1", lua -> lua), "revived: it answered its check");
        }
        try (RefPool<String, LuaTenant> aged = LifecycleSamples.aged()) {
            assertEquals("2", aged.call("tenant-1", lua -> lua.eval("return 1 + 1")));
            int opened = LifecycleSamples.warm(aged).toCompletableFuture().get(BOUND.toSeconds(), TimeUnit.SECONDS);
            assertEquals(2, opened, "tenant-1 had one");
            assertEquals(3, aged.stats().idle());
        }
        try (RefPool<String, LuaTenant> leased = LifecycleSamples.leased()) {
            LuaTenant first = null;
            for (int i = 0; i < 40; i++) { // past the acquires a thread makes before it leases
                first = leased.call("tenant-1", lua -> lua);
            }
            assertSame(first, leased.call("tenant-1", lua -> lua));
            assertEquals(1, leased.stats().live(), "leased to this thread: live with no call running");
            assertEquals(0, leased.stats().idle());
            leased.clearIdle(); // gives back the lease, then closes what is idle
            assertTrue(first.isClosed());
        }
    }

    @Test
    void theReadmeExampleRunsAndIsShownVerbatim() throws IOException, InterruptedException {
        assertEquals(1001L, ReadmeExample.countRequests(), "no update lost");
        String readme = Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(), "the README shows a java example");
        String region = regions(Files.readString(PACKAGE.resolve("ReadmeExample.java"), StandardCharsets.UTF_8))
                .get("readme");
        assertEquals(region, block.group(1), "the README's example");
        assertTrue(!block.find(), "the README shows one java example");
    }

    @Test
    void theGuideShowsTheseSamplesVerbatim() throws IOException {
        Map<String, String> regions = new LinkedHashMap<>();
        for (String file : SAMPLE_FILES) {
            regions.putAll(regions(Files.readString(PACKAGE.resolve(file), StandardCharsets.UTF_8)));
        }
        String guide = Files.readString(GUIDE, StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("(?:<!-- sample: ([\\w-]+) -->\\n)?```java\\n(.*?)```", Pattern.DOTALL)
                .matcher(guide);
        List<String> shown = new ArrayList<>();
        while (block.find()) {
            String name = block.group(1);
            assertTrue(name != null, "a java block of the guide without a sample marker:\n" + block.group(2));
            assertTrue(regions.containsKey(name), "no region '" + name + "' in " + SAMPLE_FILES);
            assertEquals(regions.get(name), block.group(2), "the guide's sample '" + name + "'");
            shown.add(name);
        }
        assertEquals(regions.keySet(), new LinkedHashSet<>(shown), "every sample is shown once");
        assertEquals(regions.size(), shown.size(), "every sample is shown once");
    }

    /** The tagged regions of {@code source}, each dedented, with a trailing newline. */
    static Map<String, String> regions(String source) {
        Map<String, String> regions = new LinkedHashMap<>();
        Matcher region = Pattern.compile("// tag::([\\w-]+)\\[]\\n(.*?)\\n[ \\t]*// end::\\1\\[]", Pattern.DOTALL)
                .matcher(source);
        while (region.find()) {
            regions.put(region.group(1), dedent(region.group(2)));
        }
        return regions;
    }

    private static String dedent(String text) {
        String[] lines = text.split("\\n", -1);
        int indent = Integer.MAX_VALUE;
        for (String line : lines) {
            if (!line.isBlank()) {
                indent = Math.min(indent, line.length() - line.stripLeading().length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return out.toString();
    }
}
