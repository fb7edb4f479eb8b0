package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A key whose {@code hashCode} throws while a retired object leaves its slot: the retirement
 * stands (acquires pass the retired object by), and no reference or capacity permit is lost. The key is armed by hand at the point the slot is touched; the revive check is
 * held in the validator by a latch.
 */
class KeyFaultDuringRetireTest {
    /** A key whose {@code hashCode} throws while armed. */
    static final class ArmedKey {
        final AtomicBoolean armed = new AtomicBoolean();
        /** Run by the armed call before it throws, or {@code null}. */
        volatile TestKit.Action onArmed;

        @Override
        public int hashCode() {
            if (armed.get()) {
                TestKit.Action hook = onArmed;
                if (hook != null) {
                    onArmed = null;
                    try {
                        hook.run();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
                throw new IllegalStateException("hashCode of the armed key");
            }
            return 7;
        }

        @Override
        public boolean equals(Object other) {
            return other == this;
        }

        @Override
        public String toString() {
            return "armed-key";
        }
    }

    private final Map<Object, DisposalCause> disposed = new ConcurrentHashMap<>();

    private RefPool.Builder<ArmedKey, Object> builder() {
        return RefPool.<ArmedKey, Object>newBuilder()
                .errorListener(e -> {})
                .disposer((ArmedKey key, Object value, DisposalCause cause) -> {
                    if (disposed.put(value, cause) != null) {
                        throw new AssertionError("disposed twice: " + value);
                    }
                });
    }

    @Test
    void aHandleInvalidateWhoseKeyThrowsRetiresTheObjectAllTheSame() {
        ArmedKey key = new ArmedKey();
        RefPool<ArmedKey, Object> pool = builder().build(k -> new Object());
        Handle<Object> handle = pool.attached(() -> pool.acquire(key));
        Object first = handle.call(v -> v);

        key.armed.set(true);
        IllegalStateException thrown = assertThrows(IllegalStateException.class, handle::invalidate);
        assertEquals("hashCode of the armed key", thrown.getMessage());
        key.armed.set(false);

        assertFalse(handle.invalidate(), "retired already");
        assertNotSame(first, pool.call(key, v -> v), "the retired object kept its slot, yet acquires pass it by");
        assertNull(disposed.get(first), "its handle is still open");
        pool.runAttached(handle::close);
        assertEquals(DisposalCause.RETIRED, disposed.get(first));
        pool.close();
        assertEquals(2, disposed.size());
    }

    @Test
    void aSecondInvalidateWhileTheFirstsKeyFailsIsToldTheTruth() throws Exception {
        ArmedKey key = new ArmedKey();
        RefPool<ArmedKey, Object> pool = builder().build(k -> new Object());
        Handle<Object> first = pool.attached(() -> pool.acquire(key));
        Handle<Object> second = pool.attached(() -> pool.acquire(key));
        Object object = first.call(v -> v);
        CountDownLatch trapped = new CountDownLatch(1);
        CountDownLatch mayThrow = new CountDownLatch(1);
        key.onArmed = () -> { // inside the first invalidate, as the retired object leaves its slot
            trapped.countDown();
            assertTrue(mayThrow.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        };

        key.armed.set(true);
        Forked<Boolean> failing = fork("failing-invalidate", first::invalidate);
        assertTrue(trapped.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        key.armed.set(false);
        boolean secondRetired = second.invalidate();
        mayThrow.countDown();
        assertEquals("hashCode of the armed key", failing.joinFailure().getMessage());

        assertFalse(secondRetired, "the first invalidate retired it");
        assertNotSame(object, pool.call(key, v -> v), "told it was retired already, so it is not the key's");
        pool.runAttached(() -> {
            first.close();
            second.close();
        });
        assertEquals(DisposalCause.RETIRED, disposed.get(object));
        pool.close();
    }

    @Test
    void anInterrupterRetirementWhoseKeyThrowsIsReportedAndTheCallKeepsItsOutcome() throws Exception {
        ArmedKey key = new ArmedKey();
        CountDownLatch stopped = new CountDownLatch(1);
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        RefPool<ArmedKey, Object> pool = builder()
                .errorListener(errors::add)
                .idle(cache -> cache.maximumSize(10))
                .interrupter((ArmedKey k, Object v) -> {
                    stopped.countDown();
                    return Interrupter.Outcome.RETIRE;
                })
                .build(k -> new Object());
        Object first = pool.call(key, v -> v);

        String outcome = pool.call(key, Duration.ofMillis(20), v -> {
            key.armed.set(true); // from here the object cannot leave the key's slot
            assertTrue(stopped.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
            return "stopped";
        });
        key.armed.set(false);

        assertEquals("stopped", outcome, "the retirement's failure replaced the call's outcome");
        assertTrue(
                errors.stream().anyMatch(e -> e.kind() == PoolError.Kind.INTERRUPTER_FAILED),
                "the retirement's failure is reported: " + errors);
        assertEquals(DisposalCause.INTERRUPTED, disposed.get(first), "retired all the same, at the call's release");
        assertNotSame(first, pool.call(key, v -> v));
        pool.close();
    }

    @Test
    void aReviveCheckThatMeetsAnInvalidateAndAThrowingKeyLosesNoReferenceNorPermit() throws Exception {
        ArmedKey key = new ArmedKey();
        CountDownLatch checking = new CountDownLatch(1);
        CountDownLatch verdict = new CountDownLatch(1);
        AtomicBoolean holdTheCheck = new AtomicBoolean();
        RefPool<ArmedKey, Object> pool = builder()
                .maxObjects(1)
                .idle(cache -> cache.maximumSize(10))
                .validator((ArmedKey k, Object v) -> {
                    if (holdTheCheck.get()) {
                        checking.countDown();
                        verdict.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                    }
                    return true;
                })
                .build(k -> new Object());
        Object first = pool.call(key, v -> v); // now idle, in the cache

        holdTheCheck.set(true);
        Forked<Object> reviver = fork("reviver", () -> pool.call(key, v -> v));
        assertTrue(checking.await(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(pool.invalidate(key), "retired while its revive check runs");
        key.armed.set(true); // the check passes, then the retired object's slot is let go: the key throws
        verdict.countDown();
        assertEquals("hashCode of the armed key", reviver.joinFailure().getMessage());
        key.armed.set(false);
        holdTheCheck.set(false);

        assertEquals(DisposalCause.INVALIDATED, disposed.get(first), "the reference the check took was kept");
        assertEquals(0, pool.stats().live());
        Object next = pool.call(key, v -> v); // maxObjects(1): the first object's permit came back
        assertNotSame(first, next);
        pool.close();
        assertEquals(2, disposed.size());
    }
}
