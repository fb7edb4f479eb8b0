package io.refpool.core.guide;

import io.refpool.core.RefPool;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The guide's samples of an interpreter's life in the idle cache: checked, retired by age, warmed
 * up, leased to the threads that use it.
 */
final class LifecycleSamples {
    private LifecycleSamples() {}

    static RefPool<String, LuaTenant> checked() {
        // tag::validate-revive[]
        RefPool<String, LuaTenant> interpreters = RefPool.newBuilder()
                .disposer(LuaTenant::close)
                .idle(cache -> cache.maximumSize(8))
                // an idle interpreter answers before it is lent again; one in use is never checked
                .validator((String tenant, LuaTenant lua) -> "ok".equals(lua.eval("return 'ok'")))
                .build(LuaTenant::new);
        // end::validate-revive[]
        return interpreters;
    }

    static RefPool<String, LuaTenant> aged() {
        // tag::max-lifetime[]
        RefPool<String, LuaTenant> interpreters = RefPool.newBuilder()
                .disposer(LuaTenant::close)
                .idle(cache -> cache.maximumSize(8))
                .maxLifetime(Duration.ofHours(1)) // each retires after 54 to 60 minutes, never mid-request
                .build(LuaTenant::new);
        // end::max-lifetime[]
        return interpreters;
    }

    static RefPool<String, LuaTenant> leased() {
        // tag::thread-leases[]
        RefPool<String, LuaTenant> interpreters = RefPool.newBuilder()
                .disposer(LuaTenant::close)
                .idle(cache -> cache.maximumSize(8))
                // a worker thread keeps the interpreters it uses; one unused for 30 to 60 s goes idle
                .threadLeases(Duration.ofSeconds(30))
                .build(LuaTenant::new);
        // end::thread-leases[]
        return interpreters;
    }

    static CompletionStage<Integer> warm(RefPool<String, LuaTenant> interpreters) {
        // tag::warm-up[]
        CompletionStage<Integer> ready = interpreters.warmUp(
                List.of("tenant-1", "tenant-2", "tenant-3"), CancellationToken.none()); // how many it opened
        // end::warm-up[]
        return ready;
    }
}
