package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** {@code CancellationToken.none()} never cancels and costs nothing to register on. */
class CancellationNoneTokenTest {
    private static final int CALLS = 100_000;
    private static final Runnable CALLBACK = () -> {
        throw new AssertionError("a callback on none() must never run");
    };

    private final AllocationCounter allocations = new AllocationCounter();

    /** Keeps the registrations observable so the loops cannot be optimised away. */
    private Registration sink;

    @Test
    void noneIsNeverCancelledAndCannotBe() {
        CancellationToken none = CancellationToken.none();

        assertSame(none, CancellationToken.none());
        assertFalse(none.isCancellationRequested());
        assertFalse(none.canBeCancelled());
        none.throwIfCancellationRequested();
        assertFalse(none.whenCancelled().toCompletableFuture().isDone());
    }

    @Test
    void registerOnNoneReturnsASharedRegistrationThatRemovesNothing() {
        Registration first = CancellationToken.none().register(CALLBACK);
        Registration second = CancellationToken.none().register(() -> {});

        assertSame(first, second);
        assertFalse(first.unregister());
        first.close();
    }

    @Test
    void registerOnNoneAllocatesNothing() {
        CancellationToken none = CancellationToken.none();
        for (int i = 0; i < CALLS; i++) {
            sink = none.register(CALLBACK);
        }

        long before = allocations.currentThread();
        for (int i = 0; i < CALLS; i++) {
            sink = none.register(CALLBACK);
            sink.unregister();
        }
        long allocated = allocations.currentThread() - before;

        assertTrue(allocated < CALLS, "register on none() allocated " + allocated + " bytes over " + CALLS + " calls");
    }

    @Test
    void registerAndUnregisterOnASourceAllocateOneSmallNode() {
        CancellationToken token = new CancellationSource().token();
        for (int i = 0; i < CALLS; i++) {
            token.register(CALLBACK).unregister();
        }

        long before = allocations.currentThread();
        for (int i = 0; i < CALLS; i++) {
            sink = token.register(CALLBACK);
            sink.unregister();
        }
        long perCall = (allocations.currentThread() - before) / CALLS;

        assertTrue(perCall <= 48, "register+unregister allocated " + perCall + " bytes per call");
    }

    @Test
    void whenCancelledOfNoneIsAFreshStageEachTime() {
        CompletionStage<Void> first = CancellationToken.none().whenCancelled();
        CompletionStage<Void> second = CancellationToken.none().whenCancelled();

        first.toCompletableFuture().complete(null);

        assertFalse(second.toCompletableFuture().isDone());
        assertEquals(
                false,
                CancellationToken.none().whenCancelled().toCompletableFuture().isDone());
    }

    /**
     * {@code ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
     * .getCurrentThreadAllocatedBytes()}, called reflectively: the tests compile inside the {@code
     * io.refpool.sync} module, which reads only {@code java.base}. The reflective call allocates a
     * few bytes itself, far below the per-call budgets asserted here.
     */
    private static final class AllocationCounter {
        private final Object bean;
        private final Method currentThreadAllocatedBytes;

        AllocationCounter() {
            try {
                bean = Class.forName("java.lang.management.ManagementFactory")
                        .getMethod("getThreadMXBean")
                        .invoke(null);
                currentThreadAllocatedBytes =
                        Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
            } catch (ReflectiveOperationException e) {
                throw new AssertionError("per-thread allocation counter unavailable", e);
            }
        }

        long currentThread() {
            try {
                long bytes = (long) currentThreadAllocatedBytes.invoke(bean);
                assertTrue(bytes >= 0, "per-thread allocation counting is disabled");
                return bytes;
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        }
    }
}
