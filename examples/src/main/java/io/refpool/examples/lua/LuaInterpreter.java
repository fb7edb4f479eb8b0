package io.refpool.examples.lua;

import io.refpool.core.Interrupter;
import io.refpool.examples.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LoadState;
import org.luaj.vm2.LuaError;
import org.luaj.vm2.LuaString;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.compiler.LuaC;
import org.luaj.vm2.lib.Bit32Lib;
import org.luaj.vm2.lib.DebugLib;
import org.luaj.vm2.lib.PackageLib;
import org.luaj.vm2.lib.StringLib;
import org.luaj.vm2.lib.TableLib;
import org.luaj.vm2.lib.ZeroArgFunction;
import org.luaj.vm2.lib.jse.JseBaseLib;
import org.luaj.vm2.lib.jse.JseMathLib;

/**
 * One tenant's Lua interpreter: a sandboxed LuaJ {@link Globals}, which is not thread-safe, so the
 * host lends it to one thread at a time (through its pool's sections).
 *
 * <pre>{@code
 * LuaInterpreter lua = new LuaInterpreter("tenant-7", unused -> {});
 * Outcome outcome = lua.run("count = (count or 0) + 1; return count", Duration.ofSeconds(1));
 * lua.interrupt();   // from another thread: the running script stops at its next hook
 * }</pre>
 *
 * <p><b>Sandbox.</b> Scripts see the base, string, table, math and bit32 libraries: no {@code io},
 * {@code os}, {@code luajava}, {@code require}, {@code dofile} or {@code loadfile}, and no
 * {@code coroutine} library (LuaJ runs each coroutine on a Java thread of its own, and a debug hook
 * is set per coroutine, so the stop below would not reach one).
 *
 * <p><b>Time limit.</b> The host's pool calls {@link #interrupt()} on a thread of its own when a
 * request's limit passes while a script runs: it raises a volatile flag, which a debug hook checks
 * every {@value #HOOK_EVERY} instructions on the running thread. Raised, the hook throws an
 * {@link Error}: LuaJ's {@code pcall} catches every {@code Exception}, so only an {@code Error}
 * unwinds through a script that wraps its loop in {@code pcall} (LuaJ's own sandbox sample stops
 * scripts the same way). The {@code debug} library is gone from the globals once the hook is set,
 * so a script cannot take the hook away. A single instruction that runs long (a huge
 * {@code string.rep}) is not stopped; neither is memory bounded.
 *
 * <p><b>Corruption.</b> Every global the host put in the interpreter, and every entry of the library
 * tables among them, is pinned when the interpreter opens. A script that rebound or removed one
 * ({@code string = nil}, {@code tostring = 42}, {@code table.insert = nil}) leaves an interpreter
 * that later scripts cannot trust. After each script the globals are checked, which is cheap: a
 * damaged one makes the interpreter unfit at once. The library entries, a few hundred pins, are
 * checked by {@link #isUsable()}, the host's validator, when the pool revives the interpreter from
 * idle: the damage is found before the tenant's next script once its requests pause, and costs a
 * busy tenant nothing per script. Globals the scripts add (their own state) are theirs to change.
 *
 * <p><b>Shared string metatable.</b> LuaJ keeps the metatable of strings (where {@code s:upper()}
 * looks up {@code upper}) in a static field, set by the first string library loaded in the JVM and
 * shared by every {@code Globals}. This class makes it a read-only copy before any tenant's
 * libraries load, so that no tenant can change string methods under the others.
 *
 * <p>The counters ({@link #closes()}, {@link #overlaps()}, {@link #closedDuringACall()}) are there
 * for the host's tests: the pool promises one thread at a time in an interpreter and exactly one
 * close, never during a call, and these record any breach.
 */
public final class LuaInterpreter {
    /** Instructions between two looks at the stop flag: cheap enough, and a tight loop stops within microseconds. */
    static final int HOOK_EVERY = 1_000;

    static {
        Globals first = new Globals();
        first.load(new JseBaseLib());
        first.load(new PackageLib());
        first.load(new StringLib()); // sets LuaString.s_metatable if no Globals in the JVM did yet
        LuaString.s_metatable = new ReadOnlyTable(LuaString.s_metatable);
    }

    private final String tenant;
    private final Globals globals = new Globals();
    private final List<Pin> pins = new ArrayList<>();

    /** Raised by {@link #interrupt()} on another thread; the hook stops the running script. Never lowered. */
    private volatile boolean stopRequested;

    /** Guarded by the section: written and read only by the thread that holds it. */
    private boolean fit = true;

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger closes = new AtomicInteger();
    private volatile boolean closedDuringACall;

    /**
     * Opens the interpreter.
     *
     * @param tenant whose interpreter this is (names its chunks)
     * @param hostApi adds the host's own globals (functions scripts may call) before the globals are pinned
     */
    public LuaInterpreter(String tenant, Consumer<? super LuaInterpreter> hostApi) {
        this.tenant = tenant;
        globals.load(new JseBaseLib());
        globals.load(new PackageLib());
        globals.load(new Bit32Lib());
        globals.load(new TableLib());
        globals.load(new StringLib());
        globals.load(new JseMathLib());
        globals.load(new DebugLib());
        LoadState.install(globals);
        LuaC.install(globals);

        LuaValue sethook = globals.get("debug").get("sethook");
        sethook.invoke(LuaValue.varargsOf(new StopHook(), LuaValue.EMPTYSTRING, LuaValue.valueOf(HOOK_EVERY)));
        for (String hidden : List.of("debug", "package", "require", "dofile", "loadfile")) {
            globals.set(hidden, LuaValue.NIL);
        }

        hostApi.accept(this);
        pinEverything();
    }

    /** Adds a global for scripts to use, such as a function of the host's API; only while the interpreter opens. */
    public void define(String name, LuaValue value) {
        if (!pins.isEmpty()) {
            throw new IllegalStateException(
                    tenant + "'s interpreter is open already: define '" + name + "' in hostApi");
        }
        globals.set(name, value);
    }

    /**
     * Runs {@code script}. Call it from one thread at a time.
     *
     * @param limit the request's limit, which {@link Outcome.TimedOut} reports
     * @return the script's value, its error, {@link Outcome.TimedOut} or {@link Outcome.Corrupted};
     *     after the last two the interpreter is {@linkplain #isFit() unfit}
     */
    Outcome run(String script, Duration limit) {
        if (running.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        try {
            Outcome outcome;
            try {
                outcome = new Outcome.Value(globals.load(script, tenant).call().tojstring());
            } catch (Stopped stopped) {
                fit = false;
                return new Outcome.TimedOut(limit);
            } catch (LuaError error) {
                outcome = new Outcome.ScriptError(withoutTraceback(error.getMessage()));
            }
            String damage = firstDamage(false);
            if (damage != null) {
                fit = false;
                return new Outcome.Corrupted(damage);
            }
            return outcome;
        } finally {
            running.decrementAndGet();
        }
    }

    /** {@return false once a script was stopped or corrupted the globals}: the host retires it then */
    boolean isFit() {
        return fit && !stopRequested;
    }

    /**
     * {@return whether every pin, the library entries too, is as the host left it}: the pool's
     * validator, on the thread that revives the interpreter from idle (nobody else holds it then)
     */
    boolean isUsable() {
        return fit && firstDamage(true) == null;
    }

    /**
     * The pool's interrupter, on a thread of the pool while a script still runs: the script stops at
     * its next hook, with an {@code Error} its {@code pcall} cannot catch.
     *
     * @return {@link Interrupter.Outcome#RETIRE}: a stopped script may have left its state halfway
     */
    Interrupter.Outcome interrupt() {
        stopRequested = true;
        return Interrupter.Outcome.RETIRE;
    }

    /** Closes the interpreter; the pool's disposer calls it, exactly once. */
    void close() {
        if (running.get() != 0) {
            closedDuringACall = true;
        }
        closes.incrementAndGet();
    }

    public String tenant() {
        return tenant;
    }

    /** {@return how often it was closed}: 1 once the pool disposed of it, 0 before */
    public int closes() {
        return closes.get();
    }

    /** {@return how many calls found another call running in this interpreter}: always 0 under the host */
    public int overlaps() {
        return overlaps.get();
    }

    /** {@return whether it was closed while a call ran in it}: never under the host */
    public boolean closedDuringACall() {
        return closedDuringACall;
    }

    @Override
    public String toString() {
        return "LuaInterpreter[" + tenant + (fit ? "" : ", unfit") + ", closes=" + closes.get() + "]";
    }

    private void pinEverything() {
        List<Pin> deep = new ArrayList<>();
        for (Entry global : entries(globals)) {
            pins.add(new Pin(globals, global.key.tojstring(), global.key, global.value, false));
            if (global.value.istable() && global.value != globals) {
                for (Entry member : entries(global.value)) {
                    String path = global.key.tojstring() + "." + member.key.tojstring();
                    deep.add(new Pin((LuaTable) global.value, path, member.key, member.value, true));
                }
            }
        }
        pins.addAll(deep); // after every global, so that a check of the globals alone stops at the first deep pin
    }

    /** {@return the first pinned name a script rebound or removed, or null if none}: the globals only, or with {@code deep} all */
    private String firstDamage(boolean deep) {
        for (Pin pin : pins) {
            if (pin.deep && !deep) {
                return null;
            }
            if (!pin.value.raweq(pin.table.rawget(pin.key))) {
                return pin.path;
            }
        }
        return null;
    }

    /** LuaJ appends the Lua stack to an error's message; the plugin's own words come first. */
    private static String withoutTraceback(String message) {
        int traceback = message.indexOf("\nstack traceback:");
        return traceback < 0 ? message : message.substring(0, traceback);
    }

    private static List<Entry> entries(LuaValue table) {
        List<Entry> entries = new ArrayList<>();
        LuaValue key = LuaValue.NIL;
        for (Varargs next = table.next(key); !(key = next.arg1()).isnil(); next = table.next(key)) {
            entries.add(new Entry(key, next.arg(2)));
        }
        return entries;
    }

    private record Entry(LuaValue key, LuaValue value) {}

    /** A global (or a library table's entry) as the host left it. */
    private record Pin(LuaTable table, String path, LuaValue key, LuaValue value, boolean deep) {}

    /** Runs every {@value #HOOK_EVERY} instructions; throws once {@link #interrupt()} asked for a stop. */
    private final class StopHook extends ZeroArgFunction {
        @Override
        public LuaValue call() {
            if (stopRequested) {
                throw new Stopped();
            }
            return NIL;
        }
    }

    /** An {@code Error}, not an exception, so that a script's {@code pcall} cannot catch it. */
    private static final class Stopped extends Error {
        private static final long serialVersionUID = 1L;

        Stopped() {
            super("script stopped by the host", null, false, false);
        }
    }

    /** A read-only deep copy of a table (LuaJ's sandbox sample has the same): writes raise a Lua error. */
    private static final class ReadOnlyTable extends LuaTable {
        ReadOnlyTable(LuaValue table) {
            for (Entry entry : entries(table)) {
                super.rawset(entry.key, entry.value.istable() ? new ReadOnlyTable(entry.value) : entry.value);
            }
        }

        @Override
        public LuaValue setmetatable(LuaValue metatable) {
            return error("table is read-only");
        }

        @Override
        public void set(int key, LuaValue value) {
            error("table is read-only");
        }

        @Override
        public void rawset(int key, LuaValue value) {
            error("table is read-only");
        }

        @Override
        public void rawset(LuaValue key, LuaValue value) {
            error("table is read-only");
        }

        @Override
        public LuaValue remove(int pos) {
            return error("table is read-only");
        }
    }
}
