package io.refpool.core.guide;

import io.refpool.core.AttachMode;
import io.refpool.core.RefPool;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/** The README's example, compiled and run by {@link GuideSamplesTest}. */
final class ReadmeExample {
    private ReadmeExample() {}

    /** {@return the synchronous answer and the async one} */
    static String[] run() {
        // tag::readme[]
        RefPool<String, LuaTenant> pool = RefPool.builder(LuaTenant::new)
                .disposer(LuaTenant::close) // runs attached, exactly once per interpreter
                .attachMode(AttachMode.PER_OBJECT) // engine shared, each interpreter single-threaded
                .strictAccess(true) // get() outside the interpreter's section throws
                .maxObjects(64) // live + idle
                .idle(cache -> cache.maximumSize(16).expireAfterAccess(Duration.ofMinutes(5)))
                .build();

        // attach, acquire, take the interpreter's section, run, release everything
        String answer = pool.call("tenant-7", lua -> lua.eval("return 6 * 7"));

        // the same without parking a thread: waits in line for capacity and the section
        CompletionStage<String> later =
                pool.callAsync("tenant-7", CancellationToken.none(), lua -> lua.eval("return 'later'"));
        // end::readme[]
        String async = later.toCompletableFuture().join();
        pool.close();
        return new String[] {answer, async};
    }
}
