package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every refusal of a closed handle names the call, the key and the pool, as the strict-access refusals do. */
class ClosedHandleRefusalNamesThePoolTest {
    private static void namesAll(String call, Executable refused) {
        IllegalStateException e = assertThrows(IllegalStateException.class, refused);
        String m = e.getMessage();
        assertTrue(m.contains(call) && m.contains("'k'") && m.contains("pool 'tenants'"), m);
    }

    @Test
    void aClosedHandleRefusesNamingThePool() {
        RefPool<String, String> pool = RefPool.<String, String>newBuilder()
                .name("tenants")
                .strictAccess(true)
                .build(k -> "v-" + k);
        Handle<String> handle = pool.attached(() -> pool.acquire("k"));
        pool.attached(() -> {
            handle.close();
            return null;
        });
        try {
            namesAll("get()", handle::get);
            namesAll("share()", handle::share);
            namesAll("section()", handle::section);
            namesAll("call()", () -> handle.call(v -> v));
            namesAll("invalidate()", handle::invalidate);
            namesAll("sectionAsync()", () -> {
                try {
                    handle.sectionAsync(CancellationToken.none())
                            .toCompletableFuture()
                            .join();
                } catch (CompletionException c) {
                    throw c.getCause();
                }
            });
        } finally {
            pool.close();
        }
    }
}
