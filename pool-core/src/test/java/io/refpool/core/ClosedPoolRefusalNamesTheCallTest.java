package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A closed pool refuses each blocking call naming the call the caller made, with its keys. */
class ClosedPoolRefusalNamesTheCallTest {
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void eachCallIsNamed(AttachMode mode) {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .maxObjects(2)
                .name("engines")
                .build();
        Object kept = new Object();
        Handle<Object> open = pool.attached(() -> pool.acquire("h")); // left open across the close
        pool.close();
        Duration second = Duration.ofSeconds(1);
        assertEquals(
                "call('k') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.call("k", value -> value))
                        .getMessage());
        assertEquals(
                "call('k') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.run("k", value -> {}))
                        .getMessage());
        assertEquals(
                "invalidate('k') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.invalidate("k"))
                        .getMessage());
        assertEquals(
                "invalidate('k') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.invalidate("k", kept))
                        .getMessage());
        assertEquals(
                "call('h') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> open.call(value -> value))
                        .getMessage());
        assertEquals(
                "invalidate('h') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, open::invalidate).getMessage());
        assertEquals(
                "acquire('k', PT1S) on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.acquire("k", second))
                        .getMessage());
        assertEquals(
                "call('k', PT1S) on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.call("k", second, value -> value))
                        .getMessage());
        assertEquals(
                "call('k', 'j') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.call("k", "j", (a, b) -> a))
                        .getMessage());
        assertEquals(
                "acquire('k') on closed pool 'engines'",
                assertThrows(PoolClosedException.class, () -> pool.acquire("k")).getMessage());
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void badInputIsReportedBeforeTheClosedPool(AttachMode mode) {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .build();
        pool.close();
        assertThrows(NullPointerException.class, () -> pool.acquire(null, Duration.ofSeconds(1)));
        IllegalArgumentException negative =
                assertThrows(IllegalArgumentException.class, () -> pool.acquire("k", Duration.ofSeconds(-1)));
        assertEquals(true, negative.getMessage().contains("timeout"), negative.getMessage());
    }
}
