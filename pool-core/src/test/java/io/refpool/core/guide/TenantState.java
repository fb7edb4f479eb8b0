// tag::save-restore[]
package io.refpool.core.guide;

import io.refpool.core.AttachMode;
import io.refpool.core.DisposalCause;
import io.refpool.core.RefPool;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Tenants whose state outlives their interpreters: saved when one closes, restored when the next opens. */
public final class TenantState implements AutoCloseable {
    /** What a tenant keeps across interpreters: here, one counter. */
    private final Map<String, Long> saved = new ConcurrentHashMap<>();

    private final RefPool<String, LuaTenant> interpreters = RefPool.<String, LuaTenant>builder(tenant -> {
                LuaTenant lua = new LuaTenant(tenant);
                lua.eval("count = " + saved.getOrDefault(tenant, 0L)); // restore
                return lua;
            })
            .disposer((tenant, lua, cause) -> {
                if (cause != DisposalCause.INVALIDATED) { // a retired interpreter's state is not worth keeping
                    saved.put(tenant, Long.parseLong(lua.eval("return count"))); // save
                }
                lua.close();
            })
            .attachMode(AttachMode.PER_OBJECT)
            .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
            .build();

    public long increment(String tenant) {
        return Long.parseLong(interpreters.call(tenant, lua -> lua.eval("count = count + 1; return count")));
    }

    /** Closes every idle interpreter; their tenants' next requests open new ones. */
    public int trim() {
        return interpreters.clearIdle();
    }

    @Override
    public void close() {
        interpreters.close();
    }

    public long saved(String tenant) {
        return saved.getOrDefault(tenant, 0L);
    }
}
// end::save-restore[]
