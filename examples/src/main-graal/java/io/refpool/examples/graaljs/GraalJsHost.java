package io.refpool.examples.graaljs;

import io.refpool.core.DisposalCause;
import io.refpool.core.PoolStats;
import io.refpool.core.RefPool;
import io.refpool.examples.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Consumer;
import org.graalvm.polyglot.Engine;

/**
 * A plugin host that runs tenants' JavaScript on GraalJS: one polyglot {@code Context} per tenant,
 * all on one shared {@link Engine}, lent to plugin threads by a {@link RefPool} in its default
 * {@code PER_OBJECT} mode. GraalJS referees the pool: a context entered by two threads at once throws
 * {@code IllegalStateException} ("Multi threaded access requested ... but is not allowed"), and the
 * pool's per-context sections make sure it never is, while different tenants run in parallel.
 *
 * <pre>{@code
 * try (GraalJsHost host = new GraalJsHost(Duration.ofSeconds(5), Duration.ofSeconds(1), api -> {})) {
 *     host.run("tenant-7", "globalThis.count = (globalThis.count || 0) + 1");   // Value[text=1]
 *     host.run("tenant-7", "while (true) {}");                                   // TimedOut: retired
 *     host.run("tenant-7", "globalThis.count");                                  // Value[text=undefined]
 * }
 * }</pre>
 *
 * <p>A script that runs past the run limit is interrupted by a watchdog thread; one that damages the
 * globals later scripts rely on is found after it returns (see {@link JsContext}). Either way the host
 * retires the context with {@link RefPool#invalidate} while it still holds the context's section:
 * the tenant's next request gets a fresh context, the retired one is closed once its last user has
 * left, and the other tenants never notice. A context cannot be reset or cloned, so retiring it is
 * how a host gets a clean one.
 *
 * <p>GraalJS 25 runs on any JDK 21+; on a stock JDK it interprets (no JIT compiler for JavaScript),
 * which is plenty for plugins that glue things together. The shared engine caches parsed code for
 * every context.
 */
public final class GraalJsHost implements AutoCloseable {
    private final Engine engine;
    private final ScheduledThreadPoolExecutor watchdog;
    private final RefPool<String, JsContext> contexts;
    private final Duration waitLimit;
    private final Duration runLimit;

    /**
     * Starts a host.
     *
     * @param waitLimit how long a request may wait for its tenant's context (the pool's waits)
     * @param runLimit how long a script may run (the watchdog)
     * @param hostApi adds the host's functions to each new context
     */
    public GraalJsHost(Duration waitLimit, Duration runLimit, Consumer<? super JsContext> hostApi) {
        this.waitLimit = waitLimit;
        this.runLimit = runLimit;
        this.engine = Engine.newBuilder("js")
                .option("engine.WarnInterpreterOnly", "false") // a stock JDK has no compiler for guest code
                .build();
        this.watchdog = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "graaljs-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        watchdog.setRemoveOnCancelPolicy(true); // a run that ends in time takes its alarm away with it
        this.contexts = RefPool.newBuilder()
                .name("graaljs-host")
                .disposer((String tenant, JsContext js, DisposalCause cause) -> js.close()) // once each, attached
                .strictAccess(true)
                .maxObjects(64)
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .build(tenant -> new JsContext(tenant, engine, hostApi));
    }

    /**
     * Runs {@code script} in {@code tenant}'s context, alone in it.
     *
     * @return the outcome; {@link Outcome.TimedOut} and {@link Outcome.Corrupted} retired the context
     * @throws io.refpool.sync.WaitTimeoutException if the context was not free within the wait limit
     */
    public Outcome run(String tenant, String script) {
        while (true) {
            Optional<Outcome> outcome = contexts.call(tenant, waitLimit, js -> {
                if (!js.isFit()) {
                    // retired while this request waited for its section: go round for the fresh one
                    return Optional.empty();
                }
                Outcome result = js.run(script, runLimit, watchdog);
                if (!js.isFit()) {
                    // Still in the section: nothing ran in it since the script, so it is the tenant's
                    // current context (only a fit one runs scripts), and this retires no other.
                    contexts.invalidate(tenant);
                }
                return Optional.of(result);
            });
            if (outcome.isPresent()) {
                return outcome.get();
            }
        }
    }

    /** {@return the pool's counters: contexts live, idle, created and closed} */
    public PoolStats stats() {
        return contexts.stats();
    }

    /**
     * Closes the host: waits at most {@code timeout} for running scripts, closes every context, and
     * then the engine. If scripts still run at the limit, their contexts close when they return and
     * the engine stays open.
     *
     * @return whether every context and the engine are closed
     */
    public boolean close(Duration timeout) {
        boolean closed = contexts.close(timeout);
        watchdog.shutdown();
        if (closed) {
            engine.close();
        }
        return closed;
    }

    @Override
    public void close() {
        contexts.close();
        watchdog.shutdown();
        engine.close();
    }

    /** Runs a few scripts for two tenants, one of them a runaway, and prints what the host answered. */
    public static void main(String[] args) {
        try (GraalJsHost host = new GraalJsHost(Duration.ofSeconds(5), Duration.ofMillis(500), api -> {})) {
            for (String script : List.of(
                    "globalThis.count = (globalThis.count || 0) + 1",
                    "globalThis.count = (globalThis.count || 0) + 1",
                    "while (true) {}",
                    "globalThis.count",
                    "JSON = undefined; 'broke JSON'",
                    "JSON.stringify({ ok: true })",
                    "throw new Error('a plugin bug')")) {
                System.out.printf("%-50s -> %s%n", "tenant-7: " + script, host.run("tenant-7", script));
            }
            System.out.printf("%-50s -> %s%n", "tenant-8: 6 * 7", host.run("tenant-8", "6 * 7"));
            System.out.println(host.stats());
        }
    }
}
