package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertFreeAndUsable;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A raw unlock of a free {@link AsyncMutex} gets a clear exception and changes no state. Bad input
 * every primitive refuses alike is in {@link AcquireBadInputTest}.
 */
class AsyncMutexBadInputTest {
    @Test
    void unlockOnAFreeMutexThrowsNamingTheState() {
        AsyncMutex mutex = new AsyncMutex();

        IllegalStateException e = assertThrows(IllegalStateException.class, mutex::unlock);

        assertTrue(e.getMessage().contains("AsyncMutex") && e.getMessage().contains("not locked"), e.getMessage());
        assertFreeAndUsable(mutex);
    }
}
