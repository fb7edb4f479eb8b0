package io.refpool.examples.lua;

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
 * try (LuaHost host = new LuaHost(Duration.ofSeconds(5), Duration.ofSeconds(1), api -> {})) {
 *     host.run("tenant-7", "count = (count or 0) + 1; return count");   // Value[text=1]
 *     host.run("tenant-7", "while true do end");                        // TimedOut: stopped, retired
 *     host.run("tenant-7", "return count");                             // Value[text=nil]: a fresh one
 * }
 * }</pre>
 *
 * <p>A script that runs past the run limit is stopped by the interpreter's instruction hook; one that
 * damages the globals later scripts rely on is found after it returns (see {@link LuaInterpreter}).
 * Either way the host retires the interpreter with {@link RefPool#invalidate}, while it still holds
 * the interpreter's section: the tenant's next request gets a fresh interpreter, the retired one is
 * closed once its last user has left, and the other tenants never notice.
 */
public final class LuaHost implements AutoCloseable {
    private final RefPool<String, LuaInterpreter> interpreters;
    private final Duration waitLimit;
    private final Duration runLimit;

    /**
     * Starts a host.
     *
     * @param waitLimit how long a request may wait for its tenant's interpreter (the pool's waits)
     * @param runLimit how long a script may run (the interpreter's hook)
     * @param hostApi adds the host's functions to each new interpreter
     */
    public LuaHost(Duration waitLimit, Duration runLimit, Consumer<? super LuaInterpreter> hostApi) {
        this.waitLimit = waitLimit;
        this.runLimit = runLimit;
        this.interpreters = RefPool.newBuilder()
                .name("lua-host")
                .disposer(
                        (String tenant, LuaInterpreter lua, DisposalCause cause) -> lua.close()) // once each, attached
                .strictAccess(true) // an interpreter kept past its call fails loudly instead of racing
                .maxObjects(64)
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .build(tenant -> new LuaInterpreter(tenant, hostApi));
    }

    /**
     * Runs {@code script} in {@code tenant}'s interpreter, alone in it.
     *
     * @return the outcome; {@link Outcome.TimedOut} and {@link Outcome.Corrupted} retired the interpreter
     * @throws io.refpool.sync.WaitTimeoutException if the interpreter was not free within the wait limit
     */
    public Outcome run(String tenant, String script) {
        while (true) {
            Optional<Outcome> outcome = interpreters.call(tenant, waitLimit, lua -> {
                if (!lua.isFit()) {
                    // retired while this request waited for its section: go round for the fresh one
                    return Optional.empty();
                }
                Outcome result = lua.run(script, runLimit);
                if (!lua.isFit()) {
                    // Still in the section: nothing ran in it since the script, so it is the tenant's
                    // current interpreter (only a fit one runs scripts), and this retires no other.
                    interpreters.invalidate(tenant);
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
     * Closes the host: waits at most {@code timeout} for running scripts, then closes every
     * interpreter (those still in use when their calls end).
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
        try (LuaHost host = new LuaHost(Duration.ofSeconds(5), Duration.ofMillis(200), api -> {})) {
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
