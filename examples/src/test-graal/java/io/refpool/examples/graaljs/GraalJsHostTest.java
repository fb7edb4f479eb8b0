package io.refpool.examples.graaljs;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.graalvm.polyglot.proxy.ProxyExecutable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The GraalJS host end to end, with GraalJS as the referee: a context entered by two threads at once
 * throws {@code IllegalStateException} ("Multi threaded access requested ... but is not allowed"),
 * which would fail a request here, and a plain {@code Context.close()} refuses a context a thread
 * runs in. On top, every request's returned count must be seen exactly once per tenant. After every
 * test the host must close within the bound, and every context it opened must have been closed
 * exactly once, never during a run, and the contexts closed for each cause are counted exactly.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GraalJsHostTest {
    private static final List<String> TENANTS = List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3");
    private static final String INCREMENT = "globalThis.count = (globalThis.count || 0) + 1";
    private static final Duration LIMIT = Duration.ofSeconds(10);
    private static final Duration MAX_LIFETIME = Duration.ofMinutes(1);

    private final List<JsContext> opened = new CopyOnWriteArrayList<>();
    /** Scripts call {@code rendezvous()} to wait until this many scripts are inside their contexts at once. */
    private volatile CyclicBarrier rendezvous = new CyclicBarrier(1);
    /** Scripts call {@code entered()} to say they are running. */
    private final CountDownLatch entered = new CountDownLatch(1);
    /** Scripts call {@code held()} to wait until the test lets them go on. */
    private final CountDownLatch letGo = new CountDownLatch(1);
    /** The host's clock for the contexts' lifetime, moved by hand. */
    private final AtomicLong now = new AtomicLong();
    /** The contexts closed for each cause the test expects; every other cause must not have happened. */
    private final Map<DisposalCause, Long> expectedDisposals = new ConcurrentHashMap<>();

    private GraalJsHost host;

    private GraalJsHost startHost() {
        return startHost(JsContext.INTERRUPT_GRACE);
    }

    private GraalJsHost startHost(Duration interruptGrace) {
        host = new GraalJsHost(LIMIT, MAX_LIFETIME, now::get, interruptGrace, js -> {
            opened.add(js);
            js.define("rendezvous", (ProxyExecutable) arguments -> {
                try {
                    rendezvous.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    throw new AssertionError("scripts of different tenants did not run at once", e);
                }
                return null;
            });
            js.define("entered", (ProxyExecutable) arguments -> {
                entered.countDown();
                return null;
            });
            js.define("held", (ProxyExecutable) arguments -> {
                entered.countDown();
                try {
                    assertTrue(letGo.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                return null;
            });
            js.define("stubborn", (ProxyExecutable) arguments -> {
                entered.countDown();
                boolean interrupted = false; // an interrupt does not end it: only the test does
                while (true) {
                    try {
                        assertTrue(letGo.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                return null;
            });
        });
        return host;
    }

    @AfterEach
    void everyContextIsClosedExactlyOnceAndNeverDuringARun() {
        PoolStats before = host.stats();
        for (DisposalCause cause : DisposalCause.values()) {
            if (cause != DisposalCause.CLOSED) {
                assertEquals(expectedDisposals.getOrDefault(cause, 0L), before.disposals(cause), "closed as " + cause);
            }
        }
        assertTrue(host.close(BOUND), "the host closed within " + BOUND);
        for (JsContext js : opened) {
            assertEquals(1, js.closes(), js + ": closed exactly once");
            assertFalse(js.closedDuringACall(), js + ": closed while a run was in it");
            assertEquals(0, js.overlaps(), js + ": two threads were inside it at once");
        }
        PoolStats stats = host.stats();
        assertEquals(opened.size(), stats.creations(), "the pool created every context the host saw");
        assertEquals(stats.creations(), stats.disposals(), "and disposed of each");
    }

    @Test
    void tenantsRunInParallelOnPlatformThreadsWithoutMultiThreadedAccess() throws Exception {
        startHost();
        differentTenantsAreInsideAtOnce(Executors.newFixedThreadPool(TENANTS.size()));
        incrementsAreSeenExactlyOnce(Executors.newFixedThreadPool(8), 8, 100);
    }

    @Test
    void tenantsRunInParallelOnVirtualThreadsWithoutMultiThreadedAccess() throws Throwable {
        startHost();
        differentTenantsAreInsideAtOnce(TestKit.virtualThreadPerTaskExecutorOrNull());
        incrementsAreSeenExactlyOnce(TestKit.virtualThreadPerTaskExecutorOrNull(), 200, 4);
    }

    @Test
    void aScriptErrorKeepsTheContextAndItsState() {
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-0", INCREMENT));
        assertEquals(
                new Outcome.ScriptError("Error: a plugin bug"),
                host.run("tenant-0", "throw new Error('a plugin bug')"));
        assertEquals(new Outcome.Value("2"), host.run("tenant-0", INCREMENT));
        assertEquals(1, opened.size(), "one context served every request");
    }

    @Test
    void aContextWhoseGlobalsAPluginCorruptedIsRetiredAndOtherTenantsKeepTheirs() {
        startHost();
        for (String tenant : List.of("tenant-a", "tenant-b")) {
            host.run(tenant, INCREMENT);
            host.run(tenant, INCREMENT);
        }
        JsContext corrupted = contextOf("tenant-a");

        // the sentinel breaks every later script that uses JSON
        assertEquals(new Outcome.Corrupted("JSON"), host.run("tenant-a", "count++; JSON = 'gone'; count"));
        eventually().alias("the corrupted context is closed").until(() -> corrupted.closes() == 1);
        expectedDisposals.put(DisposalCause.INVALIDATED, 1L);

        assertEquals(new Outcome.Value("{\"ok\":true}"), host.run("tenant-a", "JSON.stringify({ ok: true })"));
        assertEquals(new Outcome.Value("undefined"), host.run("tenant-a", "globalThis.count"), "a fresh context");
        assertEquals(new Outcome.Value("3"), host.run("tenant-b", INCREMENT), "tenant-b kept its context");
        assertEquals(0, contextOf("tenant-b").closes());
        assertEquals(3, opened.size(), "tenant-a's second context; tenant-b's first");
    }

    @Test
    void damageBelowTheGlobalsIsFoundByTheValidatorBeforeTheContextIsLentAgain() {
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        JsContext damaged = contextOf("tenant-a");

        // one level into the globals' objects: past the cheap check after the script...
        assertEquals(new Outcome.Value("0"), host.run("tenant-a", "Math.max = () => 0; Math.max(3, 7)"));
        assertEquals(0, damaged.closes(), "not retired by the run");
        assertEquals(0, host.stats().disposals(DisposalCause.FAILED_VALIDATION));

        // ...and caught when the next request revives it from idle: that request gets a fresh one
        assertEquals(new Outcome.Value("7"), host.run("tenant-a", "Math.max(3, 7)"));
        assertEquals(1, damaged.closes(), "closed by the failed validation, before the request ran");
        expectedDisposals.put(DisposalCause.FAILED_VALIDATION, 1L);
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "the fresh context serves on");
        assertEquals(2, opened.size());
    }

    @Test
    void aContextPastItsLifetimeIsReplacedAtItsNextRequestNeverDuringOne() throws Exception {
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        JsContext old = contextOf("tenant-a");
        now.addAndGet(MAX_LIFETIME.toNanos()); // idle and past its lifetime
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "a fresh context");
        assertEquals(1, old.closes());
        expectedDisposals.put(DisposalCause.LIFETIME, 1L);

        // a context that outlives its lifetime during a script is closed when the script has ended
        JsContext running = contextOf("tenant-a");
        TestKit.Forked<Outcome> held = TestKit.fork("held", () -> host.run("tenant-a", "held(); count++; count"));
        assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        now.addAndGet(MAX_LIFETIME.toNanos());
        assertEquals(new Outcome.Value("1"), host.run("tenant-b", INCREMENT), "another tenant is served meanwhile");
        assertEquals(0, running.closes(), "not closed under the running script");
        letGo.countDown();
        assertEquals(new Outcome.Value("2"), held.join(), "the script finished in its context");
        eventually().alias("closed once the script ended").until(() -> running.closes() == 1);
        expectedDisposals.put(DisposalCause.LIFETIME, 2L);

        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "a fresh context again");
        assertEquals(4, opened.size(), "tenant-a's three contexts, tenant-b's one");
    }

    @Test
    void anEndlessLoopIsInterruptedAtItsLimitAndTheHostKeepsServing() throws Exception {
        Duration runawayLimit = Duration.ofMillis(500);
        startHost();
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        JsContext runaway = contextOf("tenant-a");

        TestKit.Forked<Outcome> loop =
                TestKit.fork("runaway", () -> host.run("tenant-a", "entered(); while (true) {}", runawayLimit));
        assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        // while it loops: another tenant is served, and a request for its own tenant waits in line
        assertEquals(new Outcome.Value("1"), host.run("tenant-b", INCREMENT));
        TestKit.Forked<Outcome> queued = TestKit.fork("queued", () -> host.run("tenant-a", "globalThis.count"));

        assertEquals(new Outcome.TimedOut(runawayLimit), loop.join());
        assertEquals(new Outcome.Value("undefined"), queued.join(), "the queued request ran in a fresh context");
        eventually().alias("the runaway's context is closed").until(() -> runaway.closes() == 1);
        expectedDisposals.put(DisposalCause.INTERRUPTED, 1L);

        // a try/catch around the loop does not catch the interrupt
        assertEquals(
                new Outcome.TimedOut(runawayLimit),
                host.run("tenant-a", "while (true) { try { while (true) {} } catch (e) {} }", runawayLimit));
        expectedDisposals.put(DisposalCause.INTERRUPTED, 2L);
        assertEquals(new Outcome.Value("2"), host.run("tenant-b", INCREMENT), "tenant-b kept its context");
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "the host keeps serving tenant-a");
    }

    @Test
    void aScriptTheInterruptCannotStopIsCancelledAfterTheGraceAndItsContextClosedOnce() throws Exception {
        Duration runawayLimit = Duration.ofMillis(200);
        startHost(Duration.ofMillis(100));
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT));
        JsContext runaway = contextOf("tenant-a");

        // held in a host function that ignores thread interrupts, the script never reaches a safepoint
        TestKit.Forked<Outcome> stuck =
                TestKit.fork("stuck", () -> host.run("tenant-a", "stubborn(); while (true) {}", runawayLimit));
        assertTrue(entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        eventually()
                .alias("the interrupter cancels the context after the grace")
                .until(runaway::wasCancelled);
        assertEquals(0, runaway.closes(), "not closed under the running script");
        letGo.countDown(); // back in guest code, the loop meets the cancel

        assertEquals(new Outcome.TimedOut(runawayLimit), stuck.join());
        eventually().alias("the cancelled context is closed").until(() -> runaway.closes() == 1);
        expectedDisposals.put(DisposalCause.INTERRUPTED, 1L);
        assertEquals(new Outcome.Value("1"), host.run("tenant-a", INCREMENT), "a fresh context serves tenant-a");
        assertEquals(2, opened.size());
    }

    /** One script per tenant waits inside its context until all of them are inside theirs. */
    private void differentTenantsAreInsideAtOnce(ExecutorService threads) throws Exception {
        rendezvous = new CyclicBarrier(TENANTS.size());
        List<CompletableFuture<Outcome>> runs = new ArrayList<>();
        for (String tenant : TENANTS) {
            runs.add(CompletableFuture.supplyAsync(() -> host.run(tenant, "rendezvous(); 'met'"), threads));
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
                            Outcome outcome = host.run(tenant, INCREMENT); // a second thread inside would throw
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
            assertEquals(new Outcome.Value(String.valueOf(perTenant)), host.run(tenant, "globalThis.count"));
        }
    }

    /** {@return the context the host opened last for {@code tenant}} */
    private JsContext contextOf(String tenant) {
        JsContext last = null;
        for (JsContext js : opened) {
            if (js.tenant().equals(tenant)) {
                last = js;
            }
        }
        assertTrue(last != null, "no context was opened for " + tenant);
        return last;
    }

    private static void shutDown(ExecutorService threads) throws InterruptedException {
        threads.shutdown();
        assertTrue(threads.awaitTermination(BOUND.toMillis(), TimeUnit.MILLISECONDS));
    }
}
