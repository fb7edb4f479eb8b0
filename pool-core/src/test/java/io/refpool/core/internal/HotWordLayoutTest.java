package io.refpool.core.internal;

import static io.refpool.core.internal.FieldLayout.instanceFields;
import static io.refpool.core.internal.FieldLayout.offset;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The words a request writes, as the running JVM lays them out ({@code
 * sun.misc.Unsafe#objectFieldOffset}), have 64 bytes of their own object on each side: an entry's
 * count and idle-spell words, a thread's lease's state, and a thread's attach state and scope. Whatever a collection copies
 * next to them (another thread's state, another key's entry, the pool's attacher that every
 * request reads) is then never on the line they write.
 */
class HotWordLayoutTest {
    private static final int CACHE_LINE = 64;
    private static final Pattern PADDING = Pattern.compile("filler|[pq]\\d");

    @Test
    void anEntrysCountAndSpellWordsHaveALineOfTheirEntryOnEachSide() throws Exception {
        assertPadded(Entry.class, Set.of("count", "idleSpells", "cachedSpell", "idling"));
    }

    @Test
    void aLeasesStateHasALineOfItsLeaseOnEachSide() throws Exception {
        assertPadded(Lease.class, Set.of("state", "used"));
    }

    @Test
    void aThreadsAttachStateHasALineOfItselfOnEachSideOfItsFields() throws Exception {
        assertPadded(AttachState.class, names(AttachStateFields.class));
    }

    @Test
    void anAttachScopeHasALineOfItselfOnEachSideOfItsFields() throws Exception {
        assertPadded(AttachScope.class, names(AttachScopeFields.class));
    }

    /**
     * Asserts that each field named in {@code hot} starts at least a line after the object does
     * and ends at least a line before it does, and that every other field that is not padding is
     * a line away from each of them.
     */
    private static void assertPadded(Class<?> type, Set<String> hot) throws Exception {
        List<Field> fields = instanceFields(type);
        long end = 0;
        for (Field field : fields) {
            end = Math.max(end, offset(field) + size(field));
        }
        List<Field> hotFields = new ArrayList<>();
        for (Field field : fields) {
            if (hot.contains(field.getName())) {
                hotFields.add(field);
            }
        }
        assertTrue(hotFields.size() == hot.size(), () -> type.getSimpleName() + " lacks one of " + hot);
        for (Field word : hotFields) {
            long at = offset(word);
            long after = end - (at + size(word));
            String where = type.getSimpleName() + "." + word.getName() + " at " + at + " of " + end + " bytes";
            assertTrue(at >= CACHE_LINE, () -> where + ": less than a line after the object's start");
            assertTrue(after >= CACHE_LINE, () -> where + ": less than a line before the object's end");
            for (Field other : fields) {
                if (hot.contains(other.getName())
                        || PADDING.matcher(other.getName()).matches()) {
                    continue;
                }
                long distance = Math.abs(offset(other) - at);
                assertTrue(
                        distance >= CACHE_LINE,
                        () -> where + ": " + other.getName() + " is " + distance + " bytes away");
            }
        }
    }

    private static Set<String> names(Class<?> declaring) {
        Set<String> names = new java.util.HashSet<>();
        for (Field field : declaring.getDeclaredFields()) {
            if (!Modifier.isStatic(field.getModifiers())) {
                names.add(field.getName());
            }
        }
        return names;
    }

    private static long size(Field field) {
        Class<?> t = field.getType();
        if (t == long.class || t == double.class) {
            return 8;
        }
        if (t == int.class || t == float.class) {
            return 4;
        }
        if (t == short.class || t == char.class) {
            return 2;
        }
        if (t == byte.class || t == boolean.class) {
            return 1;
        }
        return 4; // a reference, compressed (8 without compressed oops: the pads still cover it)
    }
}
