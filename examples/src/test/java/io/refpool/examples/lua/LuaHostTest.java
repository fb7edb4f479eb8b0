package io.refpool.examples.lua;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.refpool.core.DisposalCause;
import io.refpool.core.PoolStats;
import io.refpool.examples.Outcome;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.lib.ZeroArgFunction;

/**
 * The LuaJ host end to end. LuaJ does not guard a {@code Globals} against two threads, so the
 * tests referee it themselves: a {@code count = (count or 0) + 1} spans several instructions and
 * loses or repeats increments when two threads run it in one interpreter, so every request's
 * returned count must be seen exactly once per tenant; each interpreter also counts overlapping
 * calls. After every test the host closes, and every interpreter it opened must have been closed
 * exactly once, never during a call, and the interpreters closed for each cause are counted exactly.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LuaHostTest {
    private static final List<String> TENANTS = List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3");
    private static final String INCREMENT = "count = (count or 0) + 1; return count";
    private static final Duration LIMIT = Duration.ofSeconds(10);
    private static final Duration MAX_LIFETIME = Duration.ofMinutes(1);

    private final List<LuaInterpreter> opened = new CopyOnWriteArrayList<>();
    /** Scripts call {@code rendezvous()} to wait until this many scripts are inside their interpreters at once. */
    private volatile CyclicBarrier rendezvous = new CyclicBarrier(1);
    /** Scripts call {@code entered()} to say they are running. */
    private final CountDownLatch entered = new CountDownLatch(1);
    /** Scripts call {@code held()} to wait until the test lets them go on. */
    private final CountDownLatch letGo = new CountDownLatch(1);
    /** The host's clock for the interpreters' lifetime, moved by hand. */
    private final AtomicLong now = new AtomicLong();
    /** The interpreters closed for each cause the test expects; every other cause must not have happened. */
    private final Map<DisposalCause, Long> expectedDisposals = new ConcurrentHashMap<>();

    private LuaHost host;

    private LuaHost startHost() {
        host = new LuaHost(LIMIT, MAX_LIFETIME, now::get, lua -> {
            opened.add(lua);
            lua.define("rendezvous", new ZeroArgFunction() {
                @Override
                public LuaValue call() {
                    try {
                        rendezvous.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        throw new AssertionError("scripts of different tenants did not run at once", e);
                    }
                    return NIL;
                }
            });
            lua.define("entered", new ZeroArgFunction() {
                @Override
                public LuaValue call() {
                    entered.countDown();
                    return NIL;
                }
            });
            lua.define("held", new ZeroArgFunction() {
                @Override
                public LuaValue call() {
                    entered.countDown();
                    try {
                        assertTrue(letGo.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    return NIL;
                }
            });
        });
        return host;
    }

    @AfterEach
    void everyInterpreterIsClosedExactlyOnceAndNeverDuringACall() {
        if (host == null) {
            return; // the test was skipped before it started one
        }
        PoolStats before = host.stats();
        for (DisposalCause cause : DisposalCause.values()) {
            if (cause != DisposalCause.CLOSED) {
                assertEquals(expectedDisposals.getOrDefault(cause, 0L), before.disposals(cause), "closed as " + cause);
            }
        }
        assertTrue(host.close(BOUND), "the host closed within " + BOUND);
        for (LuaInterpreter lua : opened) {
            assertEquals(1, lua.closes(), lua + ": closed exactly once");
            assertFalse(lua.closedDuringACall(), lua + ": closed while a call ran in it");
            assertEquals(0, lua.overlaps(), lua + ": two threads were inside it at once");
        }
        PoolStats stats = host.stats();
        assertEquals(opened.size(), stats.creations(), "the pool created every interpreter the host saw");
        assertEquals(stats.creations(), stats.disposals(), "and disposed of each");
    }

    @Test
    void tenantsRunInParallelOnPlatformThreadsAndNoIncrementIsLostOrRepeated() throws Exception {
        startHost();
        differentTenantsAreInsideAtOnce(Executors.newFixedThreadPool(TENANTS.size()));
        incrementsAreSeenExactlyOnce(Executors.newFixedThreadPool(8), 8, 250);
    }

    @Test
    void tenantsRunInParallelOnVirtualThreadsAndNoIncrementIsLostOrRepeated() throws Throwable {
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        assumeTrue(virtualThreads != null, "virtual threads need JDK 21+");
        startHost();
        differentTenantsAreInsideAtOnce(TestKit.virtualThreadPerTaskExecutorOrNull());
        incrementsAreSeenExactlyOnce(virtualThreads, 200, 10);
    }

    @Test
    void aScriptErrorKeepsTheInterpreterAndItsState() {
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-0", INCREMENT));
        assertEquals(new Outcome.ScriptError("tenant-0:1 a plugin bug"), host.run("tenant-0", "error('a plugin bug')"));
        assertEquals(new Outcome.Value("2"), host.run("tenant-0", INCREMENT));
        assertEquals(1, opened.size(), "one interpreter served every request");
    }

    @Test
    void anInterpreterWhoseGlobalsAPluginCorruptedIsRetiredAndOtherTenantsKeepTheirs() {
        startHost();
        for (String tenant : List.of("tenant-a", "tenant-b")) {
            host.run(tenant, INCREMENT);
            host.run(tenant, INCREMENT);
        }
        LuaInterpreter corrupted = interpreterOf("tenant-a");

        // the sentinel breaks every later script that uses the string library
        assertEquals(
                new Outcome.Corrupted("string"),
                host.run("tenant-a", "count = count + 1; string = 'gone'; return count"));
        eventually().alias("the corrupted interpreter is closed").until(() -> corrupted.closes() == 1);
        expectedDisposals.put(DisposalCause.INVALIDATED, 1L);

        assertEquals(new Outcome.Value("xxx"), host.run("tenant-a", "return string.rep('x', 3)"));
        assertEquals(new Outcome.Value("nil"), host.run("tenant-a", "return count"), "a fresh interpreter");
        assertEquals(new Outcome.Value("3"), host.run("tenant-b", INCREMENT), "tenant-b kept its interpreter");
        assertEquals(0, interpreterOf("tenant-b").closes());
        assertEquals(3, opened.size(), "tenant-a's second interpreter; tenant-b's first");
    }

    @Test
    void damageInTheLibraryTablesIsFoundByTheValidatorBeforeTheInterpreterIsLentAgain() {
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        LuaInterpreter damaged = interpreterOf("tenant-a");

        // one level into the library tables: past the cheap check after the script...
        assertEquals(new Outcome.Value("damaged"), host.run("tenant-a", "table.insert = nil; return 'damaged'"));
        assertEquals(0, damaged.closes(), "not retired by the run");
        assertEquals(0, host.stats().disposals(DisposalCause.FAILED_VALIDATION));

        // ...and caught when the next request revives it from idle: that request gets a fresh one
        assertEquals(new Outcome.Value("2"), host.run("tenant-a", "local t = {}; table.insert(t, 1); return #t + 1"));
        assertEquals(1, damaged.closes(), "closed by the failed validation, before the request ran");
        expectedDisposals.put(DisposalCause.FAILED_VALIDATION, 1L);
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "the fresh interpreter serves on");
        assertEquals(2, opened.size());
    }

    @Test
    void anInterpreterPastItsLifetimeIsReplacedAtItsNextRequestNeverDuringOne() throws Exception {
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        LuaInterpreter old = interpreterOf("tenant-a");
        now.addAndGet(MAX_LIFETIME.toNanos()); // idle and past its lifetime
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "a fresh interpreter");
        assertEquals(1, old.closes());
        expectedDisposals.put(DisposalCause.LIFETIME, 1L);

        // an interpreter that outlives its lifetime during a script is closed when the script has ended
        LuaInterpreter running = interpreterOf("tenant-a");
        TestKit.Forked<Outcome> held =
                TestKit.fork("held", () -> host.run("tenant-a", "held(); count = count + 1; return count"));
        assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        now.addAndGet(MAX_LIFETIME.toNanos());
        assertEquals(new Outcome.Value("1"), host.run("tenant-b", INCREMENT), "another tenant is served meanwhile");
        assertEquals(0, running.closes(), "not closed under the running script");
        letGo.countDown();
        assertEquals(new Outcome.Value("2"), held.join(), "the script finished in its interpreter");
        eventually().alias("closed once the script ended").until(() -> running.closes() == 1);
        expectedDisposals.put(DisposalCause.LIFETIME, 2L);

        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "a fresh interpreter again");
        assertEquals(4, opened.size(), "tenant-a's three interpreters, tenant-b's one");
    }

    @Test
    void noTenantCanChangeTheStringMethodsOfTheOthers() {
        startHost();
        Outcome refused = host.run("tenant-a", "getmetatable('').__index.upper = function() return 'pwned' end");
        assertTrue(
                refused instanceof Outcome.ScriptError error && error.message().contains("read-only"),
                "refused: " + refused);
        assertEquals(new Outcome.Value("X"), host.run("tenant-b", "return ('x'):upper()"));
    }

    @Test
    void anEndlessLoopIsStoppedAtItsLimitAndTheHostKeepsServing() throws Exception {
        Duration runawayLimit = Duration.ofMillis(500);
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        LuaInterpreter runaway = interpreterOf("tenant-a");

        TestKit.Forked<Outcome> loop =
                TestKit.fork("runaway", () -> host.run("tenant-a", "entered(); while true do end", runawayLimit));
        assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        // while it loops: another tenant is served, and a request for its own tenant waits in line
        assertEquals(new Outcome.Value("1"), host.run("tenant-b", INCREMENT));
        TestKit.Forked<Outcome> queued = TestKit.fork("queued", () -> host.run("tenant-a", "return count"));

        assertEquals(new Outcome.TimedOut(runawayLimit), loop.join());
        assertEquals(new Outcome.Value("nil"), queued.join(), "the queued request ran in a fresh interpreter");
        eventually().alias("the runaway's interpreter is closed").until(() -> runaway.closes() == 1);
        expectedDisposals.put(DisposalCause.INTERRUPTED, 1L);

        // a pcall around the loop does not catch the hook's stop
        assertEquals(
                new Outcome.TimedOut(runawayLimit),
                host.run("tenant-a", "while true do pcall(function() while true do end end) end", runawayLimit));
        expectedDisposals.put(DisposalCause.INTERRUPTED, 2L);
        assertEquals(new Outcome.Value("2"), host.run("tenant-b", INCREMENT), "tenant-b kept its interpreter");
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "the host keeps serving tenant-a");
    }

    /** One script per tenant waits inside its interpreter until all of them are inside theirs. */
    private void differentTenantsAreInsideAtOnce(ExecutorService threads) throws Exception {
        rendezvous = new CyclicBarrier(TENANTS.size());
        List<CompletableFuture<Outcome>> runs = new ArrayList<>();
        for (String tenant : TENANTS) {
            runs.add(CompletableFuture.supplyAsync(() -> host.run(tenant, "rendezvous(); return 'met'"), threads));
        }
        for (CompletableFuture<Outcome> run : runs) {
            assertEquals(new Outcome.Value("met"), run.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        }
        shutDown(threads);
    }

    /**
     * {@code tasks} plugins on {@code threads} send {@code requests} increments each, round the
     * tenants; each tenant must return every count from 1 to its number of requests exactly once.
     */
    private void incrementsAreSeenExactlyOnce(ExecutorService threads, int tasks, int requests) throws Exception {
        Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> plugins = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            int plugin = t;
            plugins.add(CompletableFuture.runAsync(
                    () -> {
                        for (int r = 0; r < requests; r++) {
                            String tenant = TENANTS.get((plugin + r) % TENANTS.size());
                            Outcome outcome = host.run(tenant, INCREMENT);
                            if (!(outcome instanceof Outcome.Value value)) {
                                throw new AssertionError(tenant + ": " + outcome);
                            }
                            seen.computeIfAbsent(tenant, unused -> new CopyOnWriteArrayList<>())
                                    .add(Integer.parseInt(value.text()));
                        }
                    },
                    threads));
        }
        CompletableFuture.allOf(plugins.toArray(CompletableFuture[]::new)).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        shutDown(threads);

        int perTenant = tasks * requests / TENANTS.size();
        for (String tenant : TENANTS) {
            List<Integer> counts = seen.get(tenant);
            assertEquals(perTenant, counts.size(), tenant + ": requests answered");
            Map<Integer, Long> returned =
                    counts.stream().collect(Collectors.groupingBy(count -> count, Collectors.counting()));
            List<Integer> lost = IntStream.rangeClosed(1, perTenant)
                    .filter(count -> !returned.containsKey(count))
                    .boxed()
                    .toList();
            List<Integer> repeated = returned.entrySet().stream()
                    .filter(count -> count.getValue() > 1)
                    .map(Map.Entry::getKey)
                    .sorted()
                    .toList();
            assertTrue(
                    lost.isEmpty() && repeated.isEmpty(),
                    tenant + ": each count from 1 to " + perTenant + " returned exactly once; never returned: " + lost
                            + ", returned more than once: " + repeated);
            assertEquals(new Outcome.Value(String.valueOf(perTenant)), host.run(tenant, "return count"));
        }
    }

    /** {@return the interpreter the host opened last for {@code tenant}} */
    private LuaInterpreter interpreterOf(String tenant) {
        LuaInterpreter last = null;
        for (LuaInterpreter lua : opened) {
            if (lua.tenant().equals(tenant)) {
                last = lua;
            }
        }
        assertTrue(last != null, "no interpreter was opened for " + tenant);
        return last;
    }

    private static void shutDown(ExecutorService threads) throws InterruptedException {
        threads.shutdown();
        assertTrue(threads.awaitTermination(BOUND.toMillis(), TimeUnit.MILLISECONDS));
    }
}
