// tag::example[]
package io.refpool.core.guide;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Plugins on threads of their own, and a request that gives up at a deadline. */
public final class HostExample {
    private HostExample() {}

    /** Two plugins bump one tenant's counter on two threads; no update is lost. */
    public static String countOnTwoThreads(TenantHost host) throws Exception {
        Plugin counter = h -> {
            for (int i = 0; i < 1_000; i++) {
                h.run("tenant-7", "count = (count or 0) + 1");
            }
        };
        ExecutorService pluginThreads = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> running = List.of(
                    pluginThreads.submit(() -> counter.start(host)), pluginThreads.submit(() -> counter.start(host)));
            for (Future<?> plugin : running) {
                plugin.get();
            }
        } finally {
            pluginThreads.shutdown();
        }
        return host.run("tenant-7", "return count"); // "2000": one plugin at a time in the interpreter
    }

    /** Asks the tenant's interpreter, waiting at most {@code deadline} for it. */
    public static String askWithDeadline(TenantHost host, String tenant, Duration deadline) {
        try {
            return host.runAsync(tenant, "return 6 * 7", deadline)
                    .toCompletableFuture()
                    .join();
        } catch (CancellationException cancelled) { // the deadline's token ended the wait, on any JDK
            return "gave up after " + deadline;
        }
    }
}
// end::example[]
