package io.refpool.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.DisposalCause;
import org.junit.jupiter.api.Test;

/** The refcount's own guarantees, on an {@link Entry} alone. */
class EntryRefcountTest {
    @Test
    void aReleaseNobodyHeldFailsLoudlyAndChangesNothing() {
        Entry<String, Object> entry = new Entry<>("k", new Object(), null);
        assertEquals(0, entry.release());
        Entry.DoubleRelease failure = assertThrows(Entry.DoubleRelease.class, entry::release);
        assertTrue(failure.getMessage().contains("'k'"), failure.getMessage());
        assertEquals(0, entry.count(), "the count stays at zero");
        assertTrue(entry.tryDispose(DisposalCause.RELEASED));
        assertThrows(Entry.DoubleRelease.class, entry::release, "a disposed entry refuses a release too");
        assertEquals(Entry.DISPOSED, entry.count());
    }

    @Test
    void aKeyWhoseToStringThrowsStillGetsAMessage() {
        Object hostile = new Object() {
            @Override
            public String toString() {
                throw new IllegalStateException("hostile");
            }
        };
        Entry<Object, Object> entry = new Entry<>(hostile, new Object(), null);
        entry.release();
        Entry.DoubleRelease failure = assertThrows(Entry.DoubleRelease.class, entry::release);
        assertTrue(failure.getMessage().contains("whose toString() threw"), failure.getMessage());
        assertFalse(entry.toString().isEmpty());
    }

    @Test
    void aRetainThatFindsTheObjectDisposedTakesItsAddBackAndTheCountStaysNegative() {
        Entry<String, Object> entry = new Entry<>("k", new Object(), null);
        assertEquals(0, entry.release());
        assertTrue(entry.tryDispose(DisposalCause.RELEASED), "the claim from exactly 0");
        assertEquals(Entry.DISPOSED, entry.tryRetain(), "a retain of a disposed object fails");
        assertEquals(Entry.DISPOSED, entry.count(), "its +1 was taken back");
        assertFalse(entry.tryDispose(DisposalCause.RELEASED), "disposed once only");
    }

    @Test
    void aRetainThatWinsAgainstTheClaimKeepsTheObject() {
        Entry<String, Object> entry = new Entry<>("k", new Object(), null);
        assertEquals(0, entry.release());
        assertEquals(0, entry.tryRetain(), "revived: the count was 0");
        assertFalse(entry.tryDispose(DisposalCause.RELEASED), "the claim from exactly 0 fails on a revived object");
        assertEquals(1, entry.count());
        assertEquals(0, entry.release());
        assertTrue(entry.tryDispose(DisposalCause.RELEASED));
    }
}
