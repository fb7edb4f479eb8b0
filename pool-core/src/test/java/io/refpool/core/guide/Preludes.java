// tag::prelude-factory[]
package io.refpool.core.guide;

import io.refpool.core.RefPool;
import java.nio.file.Files;
import java.nio.file.Path;

/** Interpreters that run their tenant's prelude script first; the script is read from a file. */
public final class Preludes {
    private Preludes() {}

    public static RefPool<String, LuaTenant> interpreters(Path preludes) {
        return RefPool.newBuilder().disposer(LuaTenant::close).build(tenant -> {
            String prelude = Files.readString(preludes.resolve(tenant + ".lua")); // IOException: no wrapper
            LuaTenant lua = new LuaTenant(tenant);
            lua.eval(prelude);
            return lua;
        });
    }
}
// end::prelude-factory[]
