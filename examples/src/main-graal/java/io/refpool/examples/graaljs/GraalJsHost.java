package io.refpool.examples.graaljs;

import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.DisposalCause;
import io.refpool.core.PoolStats;
import io.refpool.core.RefPool;
import io.refpool.core.SectionHooks;
import io.refpool.examples.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
 * try (GraalJsHost host = new GraalJsHost(Duration.ofSeconds(1), Duration.ofHours(1), Ticker.systemTicker(), api -> {})) {
 *     host.run("tenant-7", "globalThis.count = (globalThis.count || 0) + 1");   // Value[text=1]
 *     host.run("tenant-7", "while (true) {}");                                   // TimedOut: retired
 *     host.run("tenant-7", "globalThis.count");                                  // Value[text=undefined]
 * }
 * }</pre>
 *
 * <p>Everything about a context's life is the pool's job, set on its builder:
 *
 * <ul>
 *   <li>{@code sectionHooks}: the thread that takes a context's section enters the context
 *       ({@code Context.enter}) and leaves it before letting go, so it is bound to that thread for
 *       the whole request;
 *   <li>{@code interrupter}: a request's limit bounds its script too; past it the pool's timer
 *       thread interrupts the script ({@link JsContext#interrupt()}), the script fails with
 *       GraalJS's own {@code PolyglotException}, which the run answers as {@link Outcome.TimedOut},
 *       and the context is retired ({@code DisposalCause.INTERRUPTED});
 *   <li>a script that damages the globals is found after it returns ({@link Outcome.Corrupted}), and
 *       the run retires exactly this context with {@code pool.invalidate(tenant, context)}
 *       ({@code INVALIDATED}); a context cannot be reset or cloned, so retiring it is how a host gets a
 *       clean one;
 *   <li>{@code validator}: a context revived from idle is checked deeper first
 *       ({@link JsContext#isUsable()}); a damaged one is closed ({@code FAILED_VALIDATION}) and the
 *       request gets a fresh one;
 *   <li>{@code maxLifetime}: a context older than the limit is closed when its last request ends or
 *       when a request would revive it ({@code LIFETIME}), never during a script, so a long-lived
 *       tenant does not keep what its scripts piled up in its heap for ever.
 * </ul>
 *
 * <p>In every case the tenant's next request gets a fresh context, the retired one is closed once
 * its last user has left, and the other tenants never notice.
 *
 * <p>GraalJS 25 runs on any JDK 21+; on a stock JDK it interprets (no JIT compiler for JavaScript),
 * which is plenty for plugins that glue things together. The shared engine caches parsed code for
 * every context.
 */
public final class GraalJsHost implements AutoCloseable {
    private final Engine engine;
    private final RefPool<String, JsContext> contexts;
    private final Duration limit;

    /**
     * Starts a host.
     *
     * @param limit how long a request may take, waiting for its tenant's context and running its
     *     script: past it the script is interrupted
     * @param maxLifetime how long a context may serve before it is replaced (up to a tenth less)
     * @param ticker the clock {@code maxLifetime} is read from (tests pass a fake one)
     * @param hostApi adds the host's functions to each new context
     */
    public GraalJsHost(Duration limit, Duration maxLifetime, Ticker ticker, Consumer<? super JsContext> hostApi) {
        this(limit, maxLifetime, ticker, JsContext.INTERRUPT_GRACE, hostApi);
    }

    /**
     * Starts a host whose interrupter cancels a context ({@code close(true)}) when an interrupt has
     * not stopped its script within {@code interruptGrace}.
     *
     * <pre>{@code
     * GraalJsHost host = new GraalJsHost(
     *         Duration.ofSeconds(1), Duration.ofHours(1), Ticker.systemTicker(), Duration.ofSeconds(2), api -> {});
     * }</pre>
     *
     * @param limit how long a request may take, as in the other constructor
     * @param maxLifetime how long a context may serve before it is replaced (up to a tenth less)
     * @param ticker the clock {@code maxLifetime} is read from
     * @param interruptGrace how long an interrupt may take to stop a script before the context is
     *     cancelled
     * @param hostApi adds the host's functions to each new context
     */
    public GraalJsHost(
            Duration limit,
            Duration maxLifetime,
            Ticker ticker,
            Duration interruptGrace,
            Consumer<? super JsContext> hostApi) {
        this.limit = limit;
        this.engine = Engine.newBuilder("js")
                .option("engine.WarnInterpreterOnly", "false") // a stock JDK has no compiler for guest code
                .build();
        this.contexts = RefPool.newBuilder()
                .name("graaljs-host")
                .disposer((String tenant, JsContext js, DisposalCause cause) -> js.close()) // once each, attached
                .strictAccess(true)
                .maxObjects(64)
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .sectionHooks(SectionHooks.of(
                        (String tenant, JsContext js) -> js.enter(), // bound to the thread in the section
                        (String tenant, JsContext js) -> js.leave()))
                .interrupter((String tenant, JsContext js) -> js.interrupt()) // past the limit: RETIRE
                .validator((String tenant, JsContext js) -> js.isUsable()) // revived from idle
                .maxLifetime(maxLifetime)
                .ticker(ticker)
                .build(tenant -> new JsContext(tenant, engine, interruptGrace, hostApi));
    }

    /**
     * Runs {@code script} in {@code tenant}'s context, alone in it, within the host's limit.
     *
     * @return the outcome; {@link Outcome.TimedOut} and {@link Outcome.Corrupted} retired the context
     * @throws io.refpool.sync.WaitTimeoutException if the context was not free within the limit
     */
    public Outcome run(String tenant, String script) {
        return run(tenant, script, limit);
    }

    /**
     * Runs {@code script} in {@code tenant}'s context, alone in it, within {@code limit}.
     *
     * @return the outcome; {@link Outcome.TimedOut} and {@link Outcome.Corrupted} retired the context
     * @throws io.refpool.sync.WaitTimeoutException if the context was not free within {@code limit}
     */
    public Outcome run(String tenant, String script, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            // a go-round for a fresh context gets what is left of the limit, not the whole of it
            Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
            Optional<Outcome> outcome = contexts.call(tenant, left, js -> {
                if (!js.isFit()) {
                    // retired while this request waited for its section: go round for the fresh one
                    return Optional.empty();
                }
                Outcome result = js.run(script, limit);
                if (result instanceof Outcome.Corrupted) {
                    contexts.invalidate(tenant, js); // this context, never a fresh one made meanwhile
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
     * Closes the host: waits at most {@code timeout} for running scripts, interrupts those still
     * running, closes every context, and then the engine. Contexts whose scripts are still being
     * stopped close when they return, and the engine then stays open.
     *
     * @return whether every context and the engine are closed
     */
    public boolean close(Duration timeout) {
        boolean closed = contexts.close(timeout); // interrupts the scripts still running at the limit
        if (closed) {
            engine.close();
        }
        return closed;
    }

    @Override
    public void close() {
        contexts.close();
        engine.close();
    }

    /** Runs a few scripts for two tenants, one of them a runaway, and prints what the host answered. */
    public static void main(String[] args) {
        try (GraalJsHost host =
                new GraalJsHost(Duration.ofMillis(500), Duration.ofHours(1), Ticker.systemTicker(), api -> {})) {
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
