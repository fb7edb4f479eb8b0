package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Retiring <em>this</em> object, not the key's: {@code Handle.invalidate()} and {@code
 * pool.invalidate(key, object)} retire exactly the object the caller holds; a replacement another
 * thread made meanwhile is untouched, and holders keep the retired object until they close. Each
 * interleaving is written out in order on one thread, as the racing threads would produce it.
 */
class RetireThisObjectTest {
    /** Each object's disposal cause, by identity. */
    private final Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();

    private RefPool<String, Object> pool() {
        return RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10))
                .disposer((String key, Object value, DisposalCause cause) -> {
                    if (disposed.put(value, cause) != null) {
                        throw new AssertionError("disposed twice: " + value);
                    }
                })
                .build(key -> new Object());
    }

    private static Object current(RefPool<String, Object> pool, String key) {
        return pool.call(key, value -> value);
    }

    @Test
    void aHandleRetiresItsObjectWhichItsHoldersKeepUntilTheyClose() {
        RefPool<String, Object> pool = pool();
        Handle<Object> first = pool.attached(() -> pool.acquire("k"));
        Handle<Object> other = first.share();
        Object retired = first.get();

        assertTrue(first.invalidate());
        assertFalse(first.invalidate(), "retired already");
        Object replacement = current(pool, "k");
        assertNotSame(retired, replacement, "the next acquire gets a new object");
        assertSame(retired, other.get(), "holders keep theirs");
        assertTrue(first.isOpen(), "the handle stays open");

        pool.runAttached(first::close);
        assertFalse(disposed.containsKey(retired), "another holder still has it");
        pool.runAttached(other::close);
        assertEquals(DisposalCause.RETIRED, disposed.get(retired));
        assertFalse(disposed.containsKey(replacement), "the replacement is untouched");
        assertThrows(IllegalStateException.class, first::invalidate, "a closed handle");
        pool.close();
        assertEquals(DisposalCause.CLOSED, disposed.get(replacement));
    }

    @Test
    void aHandleWhoseObjectWasReplacedMeanwhileLeavesTheReplacementAlone() {
        RefPool<String, Object> pool = pool();
        Handle<Object> holder = pool.attached(() -> pool.acquire("k"));
        Object old = holder.get();
        assertTrue(pool.invalidate("k"), "another thread retires the key's object...");
        Object replacement = current(pool, "k"); // ...and a request makes its replacement

        assertFalse(holder.invalidate(), "its own object was retired already");
        assertSame(replacement, current(pool, "k"), "the replacement still serves the key");
        pool.runAttached(holder::close);
        assertEquals(DisposalCause.INVALIDATED, disposed.get(old), "the first retirement's cause");
        assertFalse(disposed.containsKey(replacement));
        pool.close();
    }

    @Test
    void invalidateKeyAndObjectRetiresOnlyThatObject() {
        RefPool<String, Object> pool = pool();
        Object first = current(pool, "k");
        assertFalse(pool.invalidate("k", new Object()), "not the key's object");
        assertSame(first, current(pool, "k"));

        // inside call: the function retires the object it was given
        boolean retiredInside = pool.call("k", value -> pool.invalidate("k", value));
        assertTrue(retiredInside);
        assertEquals(DisposalCause.INVALIDATED, disposed.get(first), "idle after the call: disposed");
        Object second = current(pool, "k");
        assertNotSame(first, second);
        assertFalse(pool.invalidate("k", first), "a retired object is not the key's any more");
        assertFalse(disposed.containsKey(second), "the replacement is untouched");
        pool.close();
    }
}
