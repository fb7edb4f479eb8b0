// tag::host-build[]
package io.refpool.core.guide;

import io.micrometer.core.instrument.MeterRegistry;
import io.refpool.core.AttachMode;
import io.refpool.core.Attachment;
import io.refpool.core.Handle;
import io.refpool.core.LeakDetection;
import io.refpool.core.PoolError;
import io.refpool.core.PoolStats;
import io.refpool.core.RefPool;
import io.refpool.core.RefPoolMetrics;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.Guard;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/** Lends each tenant's Lua interpreter to plugins, one plugin at a time per interpreter. */
public final class TenantHost implements AutoCloseable {
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final RefPool<String, LuaTenant> interpreters;

    public TenantHost(Consumer<LuaTenant> onOpen) {
        interpreters = RefPool.newBuilder()
                .name("lua") // in messages, JFR events and drainer thread names
                .disposer(LuaTenant::close) // attached, once each; close() may throw
                .attachMode(AttachMode.PER_OBJECT) // the default: tenants in parallel, one thread per interpreter
                .strictAccess(true) // get() outside its interpreter's section throws
                .maxObjects(32) // live plus idle interpreters
                .idle(cache -> cache.maximumSize(8).expireAfterAccess(Duration.ofMinutes(5)))
                .leakDetection(LeakDetection.SAMPLED) // finds handles dropped unclosed
                .errorListener(errors::add) // default: System.Logger "io.refpool", WARNING
                .build(
                        tenant -> { // the types come from the field
                            LuaTenant lua = new LuaTenant(tenant);
                            onOpen.accept(lua);
                            return lua;
                        });
    }
    // end::host-build[]

    // tag::host-run[]
    /** Runs {@code script} in the tenant's interpreter, with no other plugin inside it. */
    public String run(String tenant, String script) {
        return interpreters.call(tenant, lua -> lua.eval(script));
    }
    // end::host-run[]

    // tag::host-timed[]
    /** As {@link #run}, waiting at most {@code wait} for the engine and for the interpreter. */
    public String runWithin(String tenant, String script, Duration wait) {
        try (Attachment attached = interpreters.attach(wait)) { // WaitTimeoutException names the pool
            Handle<LuaTenant> handle = interpreters.acquire(tenant);
            try (handle;
                    Guard section = handle.section(wait)) { // ...or the tenant's interpreter
                return handle.get().eval(script);
            }
        }
    }
    // end::host-timed[]

    // tag::host-async[]
    /** As {@link #run}, without blocking a thread: waits in line for capacity and the interpreter. */
    public CompletionStage<String> runAsync(String tenant, String script, Duration deadline) {
        CancellationSource timeout = new CancellationSource();
        timeout.cancelAfter(deadline);
        CompletionStage<String> call = interpreters.callAsync(tenant, timeout.token(), lua -> lua.eval(script));
        call.whenComplete((result, failure) -> timeout.close());
        return call; // the pool's own stage: a cancellation reads as one
    }
    // end::host-async[]

    // tag::host-worker[]
    /** Lends the tenant's interpreter to a worker thread, which uses it and closes its handle there. */
    public CompletableFuture<String> runOnWorker(String tenant, String script, Executor worker) {
        Handle<LuaTenant> handle = interpreters.attached(() -> interpreters.acquire(tenant));
        return CompletableFuture.supplyAsync(
                () -> {
                    try (handle) { // closed on the worker, off-attachment: a pending release
                        return handle.call(lua -> lua.eval(script)); // attached, inside the interpreter's section
                    }
                },
                worker);
    }
    // end::host-worker[]

    // tag::host-lifecycle[]
    /** The tenant's scripts changed: requests from now on get a fresh interpreter. */
    public boolean reload(String tenant) {
        return interpreters.invalidate(tenant); // running requests finish on the old one, then it closes
    }

    /** Memory is short: close every interpreter nobody is using. */
    public int trim() {
        return interpreters.clearIdle();
    }

    /** Stats with every release applied, handles closed on other threads included. */
    public PoolStats settledStats() {
        interpreters.flush();
        return interpreters.stats();
    }
    // end::host-lifecycle[]

    // tag::host-stats[]
    public PoolStats stats() {
        return interpreters.stats(); // live, idle, pending releases, waiters, evictions, leaks...
    }

    public List<PoolError> errors() {
        return errors; // failed factories and disposers, leaked handles, handles open at close
    }
    // end::host-stats[]

    // tag::host-metrics[]
    /** Publishes the pool's meters, tagged {@code pool=lua}: objects live and idle, disposals by cause... */
    public void bindMetrics(MeterRegistry registry) {
        new RefPoolMetrics(interpreters).bindTo(registry);
    }
    // end::host-metrics[]

    // tag::host-close[]
    @Override
    public void close() {
        interpreters.close(); // waiters fail, idle interpreters close now, open handles are reported
    }
}
// end::host-close[]
