// tag::tenant[]
package io.refpool.core.guide;

import org.luaj.vm2.Globals;
import org.luaj.vm2.lib.jse.JsePlatform;

/** One tenant's Lua interpreter. Not thread-safe: one thread at a time may use it. */
public final class LuaTenant {
    private final String tenant;
    private final Globals globals = JsePlatform.standardGlobals();
    private boolean closed;

    public LuaTenant(String tenant) {
        this.tenant = tenant;
    }

    /** Runs a Lua chunk in this tenant's interpreter; returns its result as a string. */
    public String eval(String script) {
        if (closed) {
            throw new IllegalStateException(tenant + "'s interpreter is closed");
        }
        return globals.load(script, tenant).call().tojstring();
    }

    /** Releases the interpreter. The pool calls it attached, exactly once. */
    public void close() {
        if (closed) {
            throw new IllegalStateException(tenant + "'s interpreter was closed twice");
        }
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }
}
// end::tenant[]
