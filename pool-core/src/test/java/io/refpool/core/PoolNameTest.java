package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A pool's name: its default, and where it shows (messages and drainer thread names; JFR in PoolStatsTest). */
class PoolNameTest {
    private final TestResources resources = new TestResources();

    @Test
    void unnamedPoolsGetDistinctGeneratedNames() {
        RefPool<String, Resource> first = resources.pool(AttachMode.SHARED);
        RefPool<String, Resource> second = new TestResources().pool(AttachMode.SHARED);
        assertTrue(first.name().matches("refpool-\\d+"), first.name());
        assertNotEquals(first.name(), second.name());
        assertTrue(first.toString().contains("'" + first.name() + "'"), first.toString());
        first.close();
        second.close();
    }

    @Test
    void callsRefusedAfterCloseNameThePool() {
        RefPool<String, Resource> pool = resources.build(resources.builder().name("lua"));
        assertEquals("lua", pool.name());
        pool.close();
        assertTrue(assertThrows(PoolClosedException.class, pool::attach)
                .getMessage()
                .contains("closed pool 'lua'"));
        CompletionException async = assertThrows(
                CompletionException.class,
                () -> pool.acquireAsync("k", CancellationToken.none())
                        .toCompletableFuture()
                        .join(),
                "the stage fails; the call does not throw");
        assertTrue(
                async.getCause().getMessage().contains("closed pool 'lua'"),
                async.getCause().getMessage());
    }

    @Test
    void theLibrarysDrainerThreadNamesThePoolWhileItDrainsIt() throws Exception {
        CopyOnWriteArrayList<String> disposedOn = new CopyOnWriteArrayList<>();
        resources.alsoOnDispose(
                resource -> disposedOn.add(Thread.currentThread().getName()));
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .name("tenants")
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofMillis(5)));
        Handle<Resource> handle = pool.attached(() -> pool.acquire("k"));
        handle.close(); // not attached: the drainer applies it
        io.refpool.testkit.TestKit.eventually().until(() -> !disposedOn.isEmpty());
        assertTrue(disposedOn.get(0).matches("refpool-drainer-\\d+ \\(pool 'tenants'\\)"), disposedOn.toString());
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }
}
