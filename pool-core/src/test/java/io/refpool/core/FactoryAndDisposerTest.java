package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.ManualTicker;
import io.refpool.sync.CancellationToken;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link ObjectFactory} and {@link Disposer}: checked exceptions from either, the key's next
 * acquire retrying a failed creation, and the {@link DisposalCause} each way out of the pool gives
 * the disposer and {@link PoolStats#disposals(DisposalCause)}.
 */
class FactoryAndDisposerTest {
    /** A pooled object that remembers how often it was disposed, and why. */
    static final class Conn {
        final String key;
        final List<DisposalCause> disposedFor = new CopyOnWriteArrayList<>();

        Conn(String key) {
            this.key = key;
        }
    }

    /** Records every disposal: key, object, cause; checks it runs attached. */
    static final class Recorder implements Disposer<String, Conn> {
        final List<String> log = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        volatile RefPool<String, Conn> pool;

        @Override
        public void dispose(String key, Conn value, DisposalCause cause) {
            if (!key.equals(value.key)) {
                violations.add("disposer got key " + key + " for the object of " + value.key);
            }
            if (pool != null && !pool.isAttached()) {
                violations.add(key + " disposed unattached");
            }
            value.disposedFor.add(cause);
            log.add(key + ":" + cause);
        }
    }

    private static RefPool<String, Conn> build(Recorder recorder, RefPool.Builder<String, Conn> builder) {
        RefPool<String, Conn> pool = builder.disposer(recorder).build();
        recorder.pool = pool;
        return pool;
    }

    private static void use(RefPool<String, Conn> pool, String... keys) {
        try (Attachment attached = pool.attach()) {
            List<Handle<Conn>> handles = new ArrayList<>();
            for (String key : keys) {
                handles.add(pool.acquire(key));
            }
            handles.forEach(Handle::close);
        }
    }

    @Test
    void aCheckedFactoryFailureReachesAcquirersWrappedAndTheNextAcquireRetries() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        IOException broken = new IOException("engine not ready");
        ObjectFactory<String, Conn> factory = key -> {
            if (calls.incrementAndGet() <= 2) {
                throw broken; // a checked exception, no wrapper in the factory
            }
            return new Conn(key);
        };
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder();
        RefPool<String, Conn> pool =
                build(recorder, RefPool.builder(factory).maxObjects(1).errorListener(errors::add));

        try (Attachment attached = pool.attach()) {
            ObjectCreationException thrown = assertThrows(ObjectCreationException.class, () -> pool.acquire("a"));
            assertSame(broken, thrown.getCause());
        }
        ExecutionException async =
                assertThrows(ExecutionException.class, () -> pool.acquireAsync("a", CancellationToken.none())
                        .toCompletableFuture()
                        .get(BOUND.toSeconds(), TimeUnit.SECONDS));
        ObjectCreationException wrapped = assertInstanceOf(ObjectCreationException.class, async.getCause());
        assertSame(broken, wrapped.getCause());
        assertEquals(
                2,
                errors.stream()
                        .filter(e -> e.kind() == PoolError.Kind.FACTORY_FAILED)
                        .count());

        try (Attachment attached = pool.attach();
                Handle<Conn> retried = pool.acquire("a")) { // the third call succeeds; no permit was lost
            assertEquals("a", retried.get().key);
        }
        assertEquals(3, calls.get());
        assertEquals(1, pool.stats().creations());
        pool.close();
        assertEquals(List.of("a:" + DisposalCause.RELEASED), recorder.log); // no idle cache
        assertEquals(List.of(), recorder.violations);
    }

    @Test
    void aMethodReferenceAndANonThrowingLambdaAreFactories() {
        RefPool<String, Conn> byReference = RefPool.builder(Conn::new).build();
        RefPool<String, StringBuilder> byLambda = RefPool.<String, StringBuilder>builder(key -> new StringBuilder(key))
                .build();
        try (Attachment attached = byReference.attach();
                Handle<Conn> conn = byReference.acquire("r")) {
            assertEquals("r", conn.get().key);
        }
        try (Attachment attached = byLambda.attach();
                Handle<StringBuilder> sb = byLambda.acquire("l")) {
            assertEquals("l", sb.get().toString());
        }
        byReference.close();
        byLambda.close();
    }

    @Test
    void aCheckedDisposerFailureIsReportedAndTheObjectCountsAsDisposed() {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        IOException closeFailed = new IOException("close failed");
        RefPool<String, Conn> pool = RefPool.<String, Conn>builder(Conn::new)
                .disposer((key, conn, cause) -> {
                    throw closeFailed;
                })
                .maxObjects(1)
                .errorListener(errors::add)
                .build();
        use(pool, "a"); // no idle cache: disposed at once, and its disposer throws
        assertEquals(1, errors.size());
        assertEquals(PoolError.Kind.DISPOSER_FAILED, errors.get(0).kind());
        assertSame(closeFailed, errors.get(0).cause());
        assertEquals(1, pool.stats().disposals(DisposalCause.RELEASED));
        use(pool, "b"); // its permit came back
        pool.close();
    }

    @Test
    void eachWayOutOfThePoolNamesItsCause() {
        ManualTicker ticker = new ManualTicker();
        Recorder recorder = new Recorder();
        RefPool<String, Conn> pool = build(
                recorder, RefPool.<String, Conn>builder(Conn::new).maxObjects(3).idle(cache -> cache.maximumSize(2)
                        .expireAfterAccess(Duration.ofMinutes(1))
                        .ticker(ticker)
                        .executor(Runnable::run)));

        use(pool, "size1", "size2");
        use(pool, "size3"); // three idle with room for two: one of the first two goes for SIZE
        pool.flush();
        assertEquals(1, pool.stats().disposals(DisposalCause.SIZE));

        pool.clearIdle();
        assertEquals(2, pool.stats().disposals(DisposalCause.CLEARED));

        use(pool, "expires");
        ticker.advance(Duration.ofMinutes(2));
        pool.core().control().cachedCount(); // runs the cache's maintenance, which finds the expiry
        pool.flush();
        assertEquals(1, pool.stats().disposals(DisposalCause.EXPIRED));

        try (Attachment attached = pool.attach();
                Handle<Conn> held = pool.acquire("held")) {
            use(pool, "c1", "c2"); // with "held": three objects at maxObjects(3), two of them idle
            use(pool, "c3"); // needs a permit: an idle object goes for CAPACITY
        }
        assertEquals(1, pool.stats().disposals(DisposalCause.CAPACITY));

        try (Attachment attached = pool.attach();
                Handle<Conn> held = pool.acquire("retired")) {
            assertTrue(pool.invalidate("retired"));
            assertEquals(0, pool.stats().disposals(DisposalCause.INVALIDATED), "still held");
        }
        assertEquals(1, pool.stats().disposals(DisposalCause.INVALIDATED));

        long idleAtClose = pool.stats().idle();
        pool.close();
        assertEquals(idleAtClose, pool.stats().disposals(DisposalCause.CLOSED));

        PoolStats stats = pool.stats();
        long sum = 0;
        for (DisposalCause cause : DisposalCause.values()) {
            sum += stats.disposals(cause);
        }
        assertEquals(stats.disposals(), sum, "the causes add up to the disposals");
        assertEquals(stats.creations(), stats.disposals());
        assertEquals(stats.disposals(), recorder.log.size());
        Map<DisposalCause, Long> byCause = stats.disposalsByCause();
        for (DisposalCause cause : DisposalCause.values()) {
            assertEquals(
                    recorder.log.stream()
                            .filter(line -> line.endsWith(":" + cause))
                            .count(),
                    byCause.get(cause),
                    "the disposer was told " + cause + " as often as the stats count it");
        }
        assertEquals(List.of(), recorder.violations);
    }

    @Test
    void withoutAnIdleCacheTheLastReleaseDisposesForReleased() {
        Recorder recorder = new Recorder();
        RefPool<String, Conn> pool = build(recorder, RefPool.builder(Conn::new));
        use(pool, "a");
        assertEquals(List.of("a:" + DisposalCause.RELEASED), recorder.log);
        pool.close();
    }

    /** A key whose hashCode starts throwing once the factory has run: the object cannot be published. */
    static final class BreakingKey {
        static final AtomicBoolean BROKEN = new AtomicBoolean();

        @Override
        public int hashCode() {
            if (BROKEN.get()) {
                throw new IllegalStateException("hashCode broke");
            }
            return 7;
        }
    }

    @Test
    void anObjectThatCannotBePublishedIsDisposedForCreationFailed() {
        List<DisposalCause> causes = new CopyOnWriteArrayList<>();
        RefPool<BreakingKey, Object> pool = RefPool.<BreakingKey, Object>builder(key -> {
                    BreakingKey.BROKEN.set(true); // the slot is taken; publishing the object will fail
                    return new Object();
                })
                .disposer((key, value, cause) -> causes.add(cause))
                .errorListener(error -> {})
                .build();
        try (Attachment attached = pool.attach()) {
            assertThrows(IllegalStateException.class, () -> pool.acquire(new BreakingKey()));
        } finally {
            BreakingKey.BROKEN.set(false);
        }
        assertEquals(List.of(DisposalCause.CREATION_FAILED), causes);
        assertEquals(1, pool.stats().disposals(DisposalCause.CREATION_FAILED));
        pool.close();
    }
}
