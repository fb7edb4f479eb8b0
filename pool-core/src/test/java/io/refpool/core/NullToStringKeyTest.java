package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A key whose {@code toString()} returns {@code null} (a key class that prints a field left null):
 * the pool describes keys in its messages without trusting {@code toString}, which covered a
 * {@code toString} that throws but not one that returns {@code null}. Before the fix the message of
 * a failure threw {@code NullPointerException} while the pool was settling it: a factory's checked
 * exception left the key's creation unfinished and its permit taken (every later acquire of the key
 * waited for it), a failing validator's object was claimed and never disposed, and a failing
 * disposer's report was lost and the NPE thrown at whoever closed the handle; {@code stats()} then
 * no longer added up.
 */
class NullToStringKeyTest {
    /** A key that prints a field left null. */
    record Tenant(String id) {
        @Override
        public String toString() {
            return null;
        }
    }

    @Test
    void aFactoryFailureIsSettledAndReportedForAKeyThatPrintsAsNull() {
        AtomicBoolean fail = new AtomicBoolean(true);
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        RefPool<Tenant, StringBuilder> pool = RefPool.<Tenant, StringBuilder>builder(tenant -> {
                    if (fail.get()) {
                        throw new IOException("no prelude");
                    }
                    return new StringBuilder();
                })
                .maxObjects(1)
                .errorListener(errors::add)
                .build();
        Tenant key = new Tenant(null);

        ObjectCreationException failed = assertThrows(ObjectCreationException.class, () -> pool.call(key, sb -> sb));
        assertInstanceOf(IOException.class, failed.getCause());
        assertEquals(PoolError.Kind.FACTORY_FAILED, errors.get(0).kind());

        fail.set(false);
        assertEquals("ok", pool.call(key, Duration.ofSeconds(30), sb -> "ok"), "the key's next request creates it");
        PoolStats stats = pool.stats();
        assertEquals(1, stats.creations());
        assertEquals(1, stats.idle() + stats.disposals());
        pool.close();
    }

    @Test
    void aFailingValidatorOrDisposerIsSettledAndReportedForAKeyThatPrintsAsNull() {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        RefPool<Tenant, StringBuilder> pool = RefPool.<Tenant, StringBuilder>builder(tenant -> new StringBuilder())
                .idle(cache -> cache.maximumSize(4))
                .validator((Tenant tenant, StringBuilder sb) -> {
                    throw new IllegalStateException("unchecked");
                })
                .disposer((Tenant tenant, StringBuilder sb, DisposalCause cause) -> {
                    throw new IllegalStateException("cannot close");
                })
                .errorListener(errors::add)
                .build();
        Tenant key = new Tenant(null);
        pool.run(key, sb -> sb.append('x')); // idle now
        pool.run(key, sb -> sb.append('y')); // the revive check throws: that object goes, a new one serves
        List<PoolError.Kind> kinds = errors.stream().map(PoolError::kind).toList();
        assertTrue(kinds.contains(PoolError.Kind.REVIVE_CHECK_FAILED), kinds.toString());
        assertTrue(kinds.contains(PoolError.Kind.DISPOSER_FAILED), kinds.toString());
        PoolStats stats = pool.stats();
        assertEquals(2, stats.creations(), stats.toString());
        assertEquals(1, stats.disposals(DisposalCause.FAILED_VALIDATION), stats.toString());
        assertEquals(stats.creations(), stats.disposals() + stats.live() + stats.idle(), stats.toString());
        pool.close();
        assertEquals(pool.stats().creations(), pool.stats().disposals());
    }
}
