package io.refpool.core.guide;

// tag::readme[]
import io.refpool.core.RefPool;
import io.refpool.sync.CancellationToken;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

public final class ReadmeExample {
    /** The engine's object: one tenant's interpreter. Expensive to open, not thread-safe. */
    static final class Interpreter {
        private final Map<String, Long> variables = new HashMap<>(); // no lock: one thread at a time
        private boolean closed;

        Interpreter(String tenant) {}

        long increment(String variable) {
            if (closed) {
                throw new IllegalStateException("interpreter closed");
            }
            return variables.merge(variable, 1L, Long::sum);
        }

        void close() throws IOException { // a checked exception is fine: it goes to the error listener
            closed = true;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println(countRequests()); // 1001
    }

    static long countRequests() throws InterruptedException {
        // PER_OBJECT, the default: tenants run in parallel, each interpreter on one thread at a time
        try (RefPool<String, Interpreter> pool = RefPool.newBuilder()
                .disposer(Interpreter::close) // runs attached, exactly once per interpreter
                .maxObjects(64) // live + idle interpreters
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .build(tenant -> new Interpreter(tenant))) { // types from the variable
            // 1,000 requests on 4 threads share tenant-7's one interpreter, one request at a time
            ExecutorService plugins = Executors.newFixedThreadPool(4);
            for (int i = 0; i < 1_000; i++) {
                plugins.execute(() -> pool.call("tenant-7", engine -> engine.increment("requests")));
            }
            plugins.shutdown();
            plugins.awaitTermination(1, TimeUnit.MINUTES);

            // the same without parking a thread: waits in line for capacity and the section
            return pool.callAsync("tenant-7", CancellationToken.none(), engine -> engine.increment("requests"))
                    .toCompletableFuture()
                    .join(); // no update lost: 1001
        }
    }
}
// end::readme[]
