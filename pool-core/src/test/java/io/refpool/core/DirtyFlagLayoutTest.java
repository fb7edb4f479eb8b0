package io.refpool.core;

import static io.refpool.core.internal.FieldLayout.instanceFields;
import static io.refpool.core.internal.FieldLayout.offset;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.internal.ReleaseQueue;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The dirty flag sits on cache lines of its own: in the object as the running JVM lays it out
 * ({@code sun.misc.Unsafe#objectFieldOffset}), the {@code dirty} field is at least 128 bytes from
 * every other field that is not padding — the queue's lock, list, size and hooks, written by every
 * enqueue — and at least 128 bytes of padding follow it, before whatever the allocator puts next.
 */
class DirtyFlagLayoutTest {
    private static final int TWO_CACHE_LINES = 128;
    private static final Pattern PADDING = Pattern.compile("[pq]\\d{3}");

    @Test
    void theDirtyFlagIsAtLeast128BytesFromEveryOtherField() throws Exception {
        List<Field> fields = instanceFields(ReleaseQueue.class);
        Field dirty = fields.stream()
                .filter(f -> f.getName().equals("dirty"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no dirty field in " + fields));
        long dirtyOffset = offset(dirty);

        List<String> others = new ArrayList<>();
        for (Field field : fields) {
            if (field.equals(dirty) || PADDING.matcher(field.getName()).matches()) {
                continue;
            }
            long distance = Math.abs(offset(field) - dirtyOffset);
            others.add(field.getDeclaringClass().getSimpleName() + "." + field.getName() + " at " + offset(field));
            assertTrue(
                    distance >= TWO_CACHE_LINES,
                    () -> "dirty (offset " + dirtyOffset + ") is only " + distance + " bytes from "
                            + field.getDeclaringClass().getSimpleName() + "." + field.getName());
        }
        assertEquals(8, others.size(), () -> "the base class's lock, list, size, hooks and batches out: " + others);
        assertTrue(
                others.stream().anyMatch(o -> o.startsWith(ReleaseQueue.class.getSimpleName() + ".pending")),
                () -> "the list was checked: " + others);
    }

    @Test
    void atLeast128BytesOfPaddingFollowTheDirtyFlag() throws Exception {
        List<Field> fields = instanceFields(ReleaseQueue.class);
        long dirtyOffset = -1;
        long lastOffset = -1;
        for (Field field : fields) {
            long offset = offset(field);
            if (field.getName().equals("dirty")) {
                dirtyOffset = offset;
            }
            lastOffset = Math.max(lastOffset, offset);
        }
        assertFalse(dirtyOffset < 0, "no dirty field");
        long after = lastOffset - dirtyOffset;
        assertTrue(after >= TWO_CACHE_LINES - 1, () -> "only " + after + " bytes of the object follow the flag");
    }
}
