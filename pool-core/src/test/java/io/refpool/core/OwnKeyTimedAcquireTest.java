package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A factory, validator or disposer that acquires its own key with a time limit is refused at once,
 * as the untimed acquire is: the acquire would wait for the very creation, check or disposal its
 * thread is running, so it would only wait out its limit. (The limit here is long enough that a
 * wait shows as a timeout instead of the refusal.)
 */
class OwnKeyTimedAcquireTest {
    private static final Duration LIMIT = Duration.ofSeconds(5);

    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final AtomicReference<RefPool<String, Object>> self = new AtomicReference<>();

    private static boolean refusedForItself(Throwable failure, String what) {
        return failure instanceof IllegalStateException && failure.getMessage().contains(what);
    }

    @Test
    void aFactorysTimedAcquireOfItsOwnKeyIsRefused() {
        RefPool<String, Object> pool = RefPool.newBuilder()
                .errorListener(errors::add)
                .build((String key) -> {
                    self.get().acquire(key, LIMIT).close();
                    return new Object();
                });
        self.set(pool);
        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> pool.call("k", value -> value));
        assertTrue(refusedForItself(refused, "the factory acquired its own key"), refused.getMessage());
        assertTrue(refused.getMessage().startsWith("acquire('k') in pool '" + pool.name() + "'"), refused.getMessage());
        pool.close();
    }

    @Test
    void aValidatorsTimedAcquireOfItsOwnKeyFailsTheCheck() {
        AtomicBoolean ownKey = new AtomicBoolean();
        RefPool<String, Object> pool = RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10))
                .errorListener(errors::add)
                .validator((String key, Object value) -> {
                    if (ownKey.get()) {
                        self.get().acquire(key, LIMIT).close();
                    }
                    return true;
                })
                .build((String key) -> new Object());
        self.set(pool);
        Object first = pool.call("k", value -> value); // idle after
        ownKey.set(true);
        Object second = pool.call("k", value -> value); // revived through the check, which fails
        assertTrue(first != second, "the refused check replaced the object");
        assertEquals(1, errors.size(), errors::toString);
        assertTrue(refusedForItself(errors.get(0).cause(), "the validator acquired its own key"), errors::toString);
        pool.close();
    }

    @Test
    void aDisposersTimedAcquireOfItsOwnKeyIsRefused() {
        List<Throwable> refused = new CopyOnWriteArrayList<>();
        RefPool<String, Object> pool = RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10))
                .errorListener(errors::add)
                .disposer((String key, Object value, DisposalCause cause) -> {
                    try {
                        self.get().acquire(key, LIMIT).close();
                    } catch (IllegalStateException e) {
                        refused.add(e);
                    }
                })
                .build((String key) -> new Object());
        self.set(pool);
        pool.call("k", value -> value);
        pool.clearIdle();
        assertEquals(1, refused.size(), errors::toString);
        assertTrue(refusedForItself(refused.get(0), "disposing"), refused.get(0).getMessage());
        pool.close();
    }
}
