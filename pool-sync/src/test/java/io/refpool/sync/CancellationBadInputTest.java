package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad arguments fail at the call, name the argument, and change nothing. */
class CancellationBadInputTest {

    @Test
    void registerRejectsANullCallbackAndRegistersNothing() {
        CancellationSource source = new CancellationSource();

        NullPointerException thrown =
                assertThrows(NullPointerException.class, () -> source.token().register(null));

        assertEquals("callback", thrown.getMessage());
        assertEquals(0, source.linkedNodeCount());
        assertFalse(source.isCancellationRequested());
    }

    @Test
    void registerRejectsANullCallbackOnACancelledToken() {
        CancellationSource source = new CancellationSource();
        source.cancel();

        NullPointerException thrown =
                assertThrows(NullPointerException.class, () -> source.token().register(null));

        assertEquals("callback", thrown.getMessage());
    }

    @Test
    void registerOnNoneRejectsANullCallback() {
        NullPointerException thrown = assertThrows(
                NullPointerException.class, () -> CancellationToken.none().register(null));

        assertEquals("callback", thrown.getMessage());
    }

    @Test
    void cancelAfterRejectsANullDelayAndSchedulesNothing() {
        CancellationSource source = new CancellationSource();

        NullPointerException thrown = assertThrows(NullPointerException.class, () -> source.cancelAfter(null));

        assertEquals("delay", thrown.getMessage());
        assertNull(source.pendingTimer());
        assertFalse(source.isCancellationRequested());
    }

    @Test
    void cancelAfterRejectsANegativeDelayAndKeepsThePendingTimer() {
        CancellationSource source = new CancellationSource();
        source.cancelAfter(Duration.ofHours(1));
        Object pending = source.pendingTimer();

        IllegalArgumentException thrown =
                assertThrows(IllegalArgumentException.class, () -> source.cancelAfter(Duration.ofMillis(-1)));

        assertTrue(thrown.getMessage().startsWith("delay"), thrown.getMessage());
        assertEquals(pending, source.pendingTimer());
        assertFalse(source.isCancellationRequested());
        source.close();
    }

    @Test
    void linkedToRejectsANullArray() {
        NullPointerException thrown =
                assertThrows(NullPointerException.class, () -> CancellationSource.linkedTo((CancellationToken[]) null));

        assertEquals("tokens", thrown.getMessage());
    }

    @Test
    void linkedToRejectsANullElementBeforeTouchingAnyParent() {
        CancellationSource parent = new CancellationSource();

        NullPointerException thrown =
                assertThrows(NullPointerException.class, () -> CancellationSource.linkedTo(parent.token(), null));

        assertEquals("tokens[1]", thrown.getMessage());
        assertEquals(0, parent.linkedNodeCount());
    }
}
