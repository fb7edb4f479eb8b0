package io.refpool.examples.lua;

import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.DisposalCause;
import io.refpool.core.PoolStats;
import io.refpool.core.RefPool;
import io.refpool.examples.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A plugin host that runs tenants' Lua scripts: one LuaJ interpreter per tenant, lent to plugin
 * threads by a {@link RefPool} in its default {@code PER_OBJECT} mode, so different tenants run in
 * parallel and one interpreter never runs on two threads.
 *
 * <pre>{@code
 * try (LuaHost host = new LuaHost(Duration.ofSeconds(1), Duration.ofHours(1), Ticker.systemTicker(), api -> {})) {
 *     host.run("tenant-7", "count = (count or 0) + 1; return count");   // Value[text=1]
 *     host.run("tenant-7", "while true do end");                        // TimedOut: stopped, retired
 *     host.run("tenant-7", "return count");                             // Value[text=nil]: a fresh one
 * }
 * }</pre>
 *
 * <p>The interpreter's life is the pool's job, set on its builder: a request's limit bounds its
 * script through the {@code interrupter} (past it, a thread of the pool raises the
 * interpreter's stop flag, its instruction hook stops the script, and the interpreter is retired
 * as {@code INTERRUPTED}); a script that damages the globals is found after it returns and the run
 * retires exactly this interpreter with {@code pool.invalidate(tenant, lua)} ({@code INVALIDATED});
 * the {@code validator} checks the library tables of an interpreter revived from idle
 * ({@code FAILED_VALIDATION}); and {@code maxLifetime} replaces an interpreter that served long
 * enough, between requests ({@code LIFETIME}). See {@link LuaInterpreter} for the checks. In every
 * case the tenant's next request gets a fresh interpreter, the retired one is closed once its last
 * user has left, and the other tenants never notice.
 */
public final class LuaHost implements AutoCloseable {
    private final RefPool<String, LuaInterpreter> interpreters;
    private final Duration limit;

    /**
     * Starts a host.
     *
     * @param limit how long a request may take, waiting for its tenant's interpreter and running
     *     its script: past it the script is stopped
     * @param maxLifetime how long an interpreter may serve before it is replaced (up to a tenth less)
     * @param ticker the clock {@code maxLifetime} is read from (tests pass a fake one)
     * @param hostApi adds the host's functions to each new interpreter
     */
    public LuaHost(Duration limit, Duration maxLifetime, Ticker ticker, Consumer<? super LuaInterpreter> hostApi) {
        this.limit = limit;
        this.interpreters = RefPool.newBuilder()
                .name("lua-host")
                .disposer(
                        (String tenant, LuaInterpreter lua, DisposalCause cause) -> lua.close()) // once each, attached
                .strictAccess(true) // an interpreter kept past its call fails loudly instead of racing
                .maxObjects(64)
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .interrupter((String tenant, LuaInterpreter lua) -> lua.interrupt()) // past the limit: RETIRE
                .validator((String tenant, LuaInterpreter lua) -> lua.isUsable()) // revived from idle
                .maxLifetime(maxLifetime)
                .ticker(ticker)
                .build(tenant -> new LuaInterpreter(tenant, hostApi));
    }

    /**
     * Runs {@code script} in {@code tenant}'s interpreter, alone in it, within the host's limit.
     *
     * @return the outcome; {@link Outcome.TimedOut} and {@link Outcome.Corrupted} retired the interpreter
     * @throws io.refpool.sync.WaitTimeoutException if the interpreter was not free within the limit
     */
    public Outcome run(String tenant, String script) {
        return run(tenant, script, limit);
    }

    /**
     * Runs {@code script} in {@code tenant}'s interpreter, alone in it, within {@code limit}.
     *
     * @return the outcome; {@link Outcome.TimedOut} and {@link Outcome.Corrupted} retired the interpreter
     * @throws io.refpool.sync.WaitTimeoutException if the interpreter was not free within {@code limit}
     */
    public Outcome run(String tenant, String script, Duration limit) {
        while (true) {
            Optional<Outcome> outcome = interpreters.call(tenant, limit, lua -> {
                if (!lua.isFit()) {
                    // retired while this request waited for its section: go round for the fresh one
                    return Optional.empty();
                }
                Outcome result = lua.run(script, limit);
                if (result instanceof Outcome.Corrupted) {
                    interpreters.invalidate(tenant, lua); // this interpreter, never a fresh one made meanwhile
                }
                return Optional.of(result);
            });
            if (outcome.isPresent()) {
                return outcome.get();
            }
        }
    }

    /** {@return the pool's counters: interpreters live, idle, created and closed} */
    public PoolStats stats() {
        return interpreters.stats();
    }

    /**
     * Closes the host: waits at most {@code timeout} for running scripts, stops those still running,
     * then closes every interpreter (those still in use when their calls end).
     *
     * @return whether every interpreter is closed
     */
    public boolean close(Duration timeout) {
        return interpreters.close(timeout);
    }

    @Override
    public void close() {
        interpreters.close();
    }

    /** Runs a few scripts for two tenants, one of them a runaway, and prints what the host answered. */
    public static void main(String[] args) {
        try (LuaHost host =
                new LuaHost(Duration.ofMillis(200), Duration.ofHours(1), Ticker.systemTicker(), api -> {})) {
            for (String script : List.of(
                    "count = (count or 0) + 1; return count",
                    "count = (count or 0) + 1; return count",
                    "while true do end",
                    "return count",
                    "string = nil; return 'broke the string library'",
                    "return string.rep('ok ', 2)",
                    "error('a plugin bug')")) {
                System.out.printf("%-50s -> %s%n", "tenant-7: " + script, host.run("tenant-7", script));
            }
            System.out.printf("%-50s -> %s%n", "tenant-8: return 6 * 7", host.run("tenant-8", "return 6 * 7"));
            System.out.println(host.stats());
        }
    }
}
