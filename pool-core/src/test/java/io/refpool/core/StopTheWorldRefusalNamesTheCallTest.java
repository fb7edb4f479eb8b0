package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A refused {@code stopTheWorld} names the call the caller made, not the pool's internals. */
class StopTheWorldRefusalNamesTheCallTest {
    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCancelledTokenIsRefusedNamingStopTheWorldAndChangesNothing(AttachMode mode) {
        try (RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .build()) {
            CancellationSource source = new CancellationSource();
            source.cancel();
            CancellationException refused =
                    assertThrows(CancellationException.class, () -> pool.stopTheWorld(source.token()));
            assertTrue(refused.getMessage().contains("stopTheWorld()"), refused.getMessage());
            assertTrue(refused.getMessage().contains("already cancelled"), refused.getMessage());
            assertFalse(pool.isAttached(), "nothing opened");
            pool.stopTheWorld().close(); // the gate is free
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aClosedPoolRefusesStopTheWorldNamingIt(AttachMode mode) {
        RefPool<String, Object> pool = RefPool.<String, Object>builder(key -> new Object())
                .attachMode(mode)
                .name("engines")
                .build();
        pool.close();
        PoolClosedException refused = assertThrows(PoolClosedException.class, pool::stopTheWorld);
        assertEquals("stopTheWorld() on closed pool 'engines'", refused.getMessage());
        PoolClosedException attach = assertThrows(PoolClosedException.class, pool::attach);
        assertEquals("attach() on closed pool 'engines'", attach.getMessage());
    }
}
