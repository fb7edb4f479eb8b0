package io.refpool.core.guide;

import io.refpool.core.Interrupter;
import io.refpool.core.RefPool;
import io.refpool.core.SectionHooks;
import java.time.Duration;
import java.util.function.Consumer;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.lib.ZeroArgFunction;
import org.luaj.vm2.lib.jse.JsePlatform;

/** A host whose scripts may never return: a time limit stops them through the interpreter's own hook. */
public final class GuardedHost implements AutoCloseable {
    // tag::stoppable-lua[]
    /** A Lua interpreter that a count hook can stop, as LuaJ allows: the script fails with a LuaError. */
    public static final class StoppableLua {
        private final Globals globals = JsePlatform.debugGlobals();
        private volatile boolean stopRequested;
        private Thread boundTo;

        public StoppableLua() {
            LuaValue check = new ZeroArgFunction() {
                @Override
                public LuaValue call() {
                    if (stopRequested) {
                        throw new LuaError("stopped by the host");
                    }
                    return NIL;
                }
            };
            globals.get("debug").get("sethook").call(check, LuaValue.valueOf(""), LuaValue.valueOf(1000));
        }

        public String eval(String script) {
            if (boundTo != Thread.currentThread()) {
                throw new IllegalStateException("eval on a thread the interpreter is not bound to");
            }
            try {
                return globals.load(script).call().tojstring();
            } finally {
                stopRequested = false; // a stop is meant for the script that was running
            }
        }

        /** Any thread: the running script fails at its next hook. */
        public void stop() {
            stopRequested = true;
        }

        public void bind(Thread thread) {
            boundTo = thread;
        }
    }
    // end::stoppable-lua[]

    private final RefPool<String, StoppableLua> interpreters;

    public GuardedHost(Consumer<String> disposed) {
        // tag::runaway-build[]
        interpreters = RefPool.newBuilder()
                .interrupter((String tenant, StoppableLua lua) -> {
                    lua.stop(); // on a thread of the pool, while the script runs
                    return Interrupter.Outcome.RETIRE; // a fresh interpreter for the next request
                })
                .sectionHooks(SectionHooks.of(
                        (String tenant, StoppableLua lua) -> lua.bind(Thread.currentThread()), // section taken
                        (String tenant, StoppableLua lua) -> lua.bind(null))) // before it is released
                .disposer((String tenant, StoppableLua lua, io.refpool.core.DisposalCause cause) ->
                        disposed.accept(tenant + ": " + cause))
                .build(tenant -> new StoppableLua());
        // end::runaway-build[]
    }

    // tag::runaway-run[]
    /** Runs {@code script}, stopping it if it still runs after {@code limit}. */
    public String run(String tenant, String script, Duration limit) {
        return interpreters.call(tenant, limit, lua -> lua.eval(script)); // a stopped script: its LuaError
    }
    // end::runaway-run[]

    @Override
    public void close() {
        interpreters.close();
    }
}
