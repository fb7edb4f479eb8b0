package io.refpool.sync;

import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input to any primitive's acquire gets a clear exception at the call and changes no state,
 * whether the lock is free or held: a null token, a null or negative timeout, a raw release of a
 * lock someone else or a guard holds. Odd but valid timeouts (zero, huge) behave as asked.
 */
class AcquireBadInputTest {
    /** Asserts {@code call} throws {@code type} with a message naming {@code argument}, and changes nothing. */
    private static void assertRefused(
            Primitive.Subject lock, Class<? extends Throwable> type, String argument, Executable call) {
        long before = lock.queue().state();
        int queuedBefore = lock.queueLength();
        Throwable e = assertThrows(type, call);
        assertTrue(String.valueOf(e.getMessage()).contains(argument), () -> e.getMessage());
        assertEquals(before, lock.queue().state(), "state word");
        assertEquals(queuedBefore, lock.queueLength(), "queue");
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void nullTokenIsRefusedNamingTheArgumentFreeOrHeld(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        for (boolean held : new boolean[] {false, true}) {
            if (held) {
                lock.hold(); // contended: a null token must not slip past on the slow path
            }
            assertRefused(lock, NullPointerException.class, "token", () -> lock.acquire(null));
            assertRefused(
                    lock, NullPointerException.class, "token", () -> lock.acquireBlocking((CancellationToken) null));
        }
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void nullOrNegativeTimeoutIsRefusedNamingTheArgumentAndValueFreeOrHeld(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        for (boolean held : new boolean[] {false, true}) {
            if (held) {
                lock.hold();
            }
            assertRefused(lock, NullPointerException.class, "timeout", () -> lock.tryAcquire(null));
            assertRefused(
                    lock, IllegalArgumentException.class, "timeout", () -> lock.tryAcquire(Duration.ofSeconds(-5)));
            assertRefused(
                    lock, IllegalArgumentException.class, "PT-0.001S", () -> lock.tryAcquire(Duration.ofMillis(-1)));
        }
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void hugeTimeoutIsAcceptedAsWaitingLong(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();

        lock.tryAcquire(Duration.ofSeconds(Long.MAX_VALUE)).orElseThrow().close();

        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @EnumSource(Primitive.class)
    void zeroTimeoutOnAHeldLockDoesNotWait(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        lock.hold();

        assertTrue(lock.tryAcquire(Duration.ZERO).isEmpty());

        assertEquals(0, lock.queueLength());
        lock.release();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void secondRawReleaseAfterAHandoffIsRefusedAndTheNewOwnerKeepsTheLock(Primitive primitive) {
        Primitive.Subject lock = primitive.create();
        lock.hold();
        CompletableFuture<Guard> next = waiting(lock.acquire());
        CompletableFuture<Guard> last = waiting(lock.acquire());
        lock.release();
        Guard nextOwner = granted(next);

        assertRefused(lock, IllegalStateException.class, lock.typeName(), lock::release);

        assertTrue(lock.isHeld());
        waiting(last);
        nextOwner.close();
        granted(last).close();
        lock.assertFreeAndUsable();
    }

    @ParameterizedTest
    @MethodSource("io.refpool.sync.Primitive#exclusive")
    void rawReleaseOfALockHeldThroughAGuardIsRefusedAndTheGuardStillReleasesIt(Primitive primitive) throws Exception {
        Primitive.Subject lock = primitive.create();
        Guard guard = lock.acquireBlocking();
        CompletableFuture<Guard> queued = waiting(lock.acquire());

        assertRefused(lock, IllegalStateException.class, lock.typeName(), lock::release);

        assertTrue(lock.isHeld());
        waiting(queued);
        guard.close();
        granted(queued).close();
        lock.assertFreeAndUsable();
    }
}
