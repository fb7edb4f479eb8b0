package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What the first {@code cancel()} does with the registered callbacks, and what later ones do. */
class CancellationDispatchTest {

    @Test
    void callbacksRunNewestFirst() {
        CancellationSource source = new CancellationSource();
        List<Integer> order = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            int id = i;
            source.token().register(() -> order.add(id));
        }

        assertTrue(source.cancel());

        assertEquals(List.of(5, 4, 3, 2, 1), order);
    }

    @Test
    void callbacksRunOnTheCancellingThreadBeforeCancelReturns() {
        CancellationSource source = new CancellationSource();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        source.token().register(() -> ranOn.set(Thread.currentThread()));

        source.cancel();

        assertSame(Thread.currentThread(), ranOn.get());
    }

    @Test
    void onlyTheFirstCancelReturnsTrueAndCallbacksRunOnce() {
        CancellationSource source = new CancellationSource();
        AtomicInteger runs = new AtomicInteger();
        source.token().register(runs::incrementAndGet);

        assertTrue(source.cancel());
        assertFalse(source.cancel());
        assertFalse(source.cancel());

        assertEquals(1, runs.get());
        assertTrue(source.isCancellationRequested());
    }

    @Test
    void concurrentCancelsRunEachCallbackExactlyOnce() throws Exception {
        int threads = 4;
        int callbacks = 64;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 200; round++) {
                CancellationSource source = new CancellationSource();
                AtomicIntegerArray runs = new AtomicIntegerArray(callbacks);
                for (int i = 0; i < callbacks; i++) {
                    int id = i;
                    source.token().register(() -> runs.incrementAndGet(id));
                }
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<Boolean>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return source.cancel();
                    }));
                }
                int winners = 0;
                for (Future<Boolean> result : results) {
                    winners += result.get(10, TimeUnit.SECONDS) ? 1 : 0;
                }

                assertEquals(1, winners, "round " + round);
                int[] expected = new int[callbacks];
                Arrays.fill(expected, 1);
                assertArrayEquals(expected, toArray(runs), "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void registerOnCancelledTokenRunsTheCallbackInlineBeforeReturning() {
        CancellationSource source = new CancellationSource();
        source.cancel();
        AtomicReference<Thread> ranOn = new AtomicReference<>();

        Registration registration = source.token().register(() -> ranOn.set(Thread.currentThread()));

        assertSame(Thread.currentThread(), ranOn.get());
        assertFalse(registration.unregister());
        registration.close();
    }

    @Test
    void exceptionOfAnInlineCallbackPropagatesToRegister() {
        CancellationSource source = new CancellationSource();
        source.cancel();
        IllegalStateException thrown = new IllegalStateException("inline");

        IllegalStateException caught =
                assertThrows(IllegalStateException.class, () -> source.token().register(() -> {
                    throw thrown;
                }));

        assertSame(thrown, caught);
    }

    @Test
    void callbackRegisteredDuringTheDispatchRunsInline() {
        CancellationSource source = new CancellationSource();
        List<String> order = new ArrayList<>();
        source.token().register(() -> order.add("older"));
        source.token().register(() -> {
            order.add("newer");
            source.token().register(() -> order.add("registered inside"));
            order.add("newer done");
        });

        source.cancel();

        assertEquals(List.of("newer", "registered inside", "newer done", "older"), order);
    }

    @Test
    void throwingCallbackDoesNotStopTheOthersAndTheFirstIsRethrown() {
        CancellationSource source = new CancellationSource();
        List<String> ran = new ArrayList<>();
        IllegalStateException oldest = new IllegalStateException("oldest");
        IllegalArgumentException middle = new IllegalArgumentException("middle");
        UnsupportedOperationException newest = new UnsupportedOperationException("newest");
        source.token().register(() -> {
            ran.add("oldest");
            throw oldest;
        });
        source.token().register(() -> ran.add("quiet"));
        source.token().register(() -> {
            ran.add("middle");
            throw middle;
        });
        source.token().register(() -> {
            ran.add("newest");
            throw newest;
        });

        UnsupportedOperationException caught = assertThrows(UnsupportedOperationException.class, source::cancel);

        assertSame(newest, caught);
        assertArrayEquals(new Throwable[] {middle, oldest}, caught.getSuppressed());
        assertEquals(List.of("newest", "middle", "quiet", "oldest"), ran);
        assertTrue(source.isCancellationRequested());
        assertFalse(source.cancel());
    }

    @Test
    void errorIsRethrownAsIsAfterEveryCallbackRan() {
        CancellationSource source = new CancellationSource();
        AtomicInteger runs = new AtomicInteger();
        StackOverflowError error = new StackOverflowError("deep");
        source.token().register(runs::incrementAndGet);
        source.token().register(() -> {
            throw error;
        });

        StackOverflowError caught = assertThrows(StackOverflowError.class, source::cancel);

        assertSame(error, caught);
        assertEquals(1, runs.get());
    }

    @Test
    void checkedExceptionThrownSneakilyIsWrapped() {
        CancellationSource source = new CancellationSource();
        IOException checked = new IOException("disk");
        source.token().register(() -> sneakyThrow(checked));

        UndeclaredThrowableException caught = assertThrows(UndeclaredThrowableException.class, source::cancel);

        assertSame(checked, caught.getCause());
    }

    @Test
    void laterFailuresAreSuppressedOnTheWrapperOfAFirstCheckedException() {
        CancellationSource source = new CancellationSource();
        List<String> ran = new ArrayList<>();
        IllegalStateException oldest = new IllegalStateException("oldest");
        OutOfMemoryError middle = new OutOfMemoryError("middle");
        IOException newest = new IOException("newest, checked");
        source.token().register(() -> {
            ran.add("oldest");
            throw oldest;
        });
        source.token().register(() -> {
            ran.add("middle");
            throw middle;
        });
        source.token().register(() -> {
            ran.add("newest");
            sneakyThrow(newest);
        });

        UndeclaredThrowableException caught = assertThrows(UndeclaredThrowableException.class, source::cancel);

        assertSame(newest, caught.getCause());
        assertArrayEquals(new Throwable[] {middle, oldest}, caught.getSuppressed());
        assertEquals(0, newest.getSuppressed().length, "the others belong on what is thrown, not on its cause");
        assertEquals(List.of("newest", "middle", "oldest"), ran);
    }

    @Test
    void oneCheckedExceptionThrownByTwoCallbacksIsNotSuppressedIntoItsWrapper() {
        CancellationSource source = new CancellationSource();
        IOException shared = new IOException("shared");
        source.token().register(() -> sneakyThrow(shared));
        source.token().register(() -> sneakyThrow(shared));

        UndeclaredThrowableException caught = assertThrows(UndeclaredThrowableException.class, source::cancel);

        assertSame(shared, caught.getCause());
        assertEquals(0, caught.getSuppressed().length);
        assertEquals(0, shared.getSuppressed().length);
    }

    @Test
    void oneExceptionThrownByTwoCallbacksIsNotSuppressedIntoItself() {
        CancellationSource source = new CancellationSource();
        IllegalStateException shared = new IllegalStateException("shared");
        source.token().register(() -> {
            throw shared;
        });
        source.token().register(() -> {
            throw shared;
        });

        IllegalStateException caught = assertThrows(IllegalStateException.class, source::cancel);

        assertSame(shared, caught);
        assertEquals(0, caught.getSuppressed().length);
    }

    @Test
    void callbacksSeeTheTokenCancelled() {
        CancellationSource source = new CancellationSource();
        CancellationToken token = source.token();
        List<Boolean> seen = new ArrayList<>();
        token.register(() -> {
            seen.add(token.isCancellationRequested());
            seen.add(token.whenCancelled().toCompletableFuture().isDone());
            seen.add(assertThrows(CancellationException.class, token::throwIfCancellationRequested) != null);
        });

        source.cancel();

        assertEquals(List.of(true, true, true), seen);
    }

    @Test
    void whenCancelledCompletesBeforeTheCallbacksRun() {
        CancellationSource source = new CancellationSource();
        List<String> order = new ArrayList<>();
        source.token().whenCancelled().thenRun(() -> order.add("stage"));
        source.token().register(() -> order.add("callback"));

        source.cancel();

        assertEquals(List.of("stage", "callback"), order);
    }

    @Test
    void whenCancelledIsOneStageUntilCancelledAndThenCompletesWithNull() {
        CancellationSource source = new CancellationSource();
        CompletionStage<Void> stage = source.token().whenCancelled();

        assertSame(stage, source.token().whenCancelled());
        assertFalse(stage.toCompletableFuture().isDone());

        source.cancel();

        assertTrue(stage.toCompletableFuture().isDone());
        assertEquals(null, stage.toCompletableFuture().join());
        assertTrue(source.token().whenCancelled().toCompletableFuture().isDone());
    }

    @Test
    void whenCancelledCannotBeCompletedByItsCaller() {
        CancellationSource source = new CancellationSource();
        CompletionStage<Void> stage = source.token().whenCancelled();

        stage.toCompletableFuture().complete(null);
        assertThrows(UnsupportedOperationException.class, () -> ((CompletableFuture<Void>) stage).complete(null));

        assertFalse(source.isCancellationRequested());
        assertFalse(source.token().whenCancelled().toCompletableFuture().isDone());
    }

    @Test
    void throwIfCancellationRequestedThrowsOnlyOnceCancelled() {
        CancellationSource source = new CancellationSource();
        CancellationToken token = source.token();

        token.throwIfCancellationRequested();
        source.cancel();

        assertThrows(CancellationException.class, token::throwIfCancellationRequested);
    }

    @Test
    void tokenIsOneObjectThatCanBeCancelled() {
        CancellationSource source = new CancellationSource();

        assertSame(source.token(), source.token());
        assertTrue(source.token().canBeCancelled());
        assertFalse(source.token().isCancellationRequested());
    }

    @Test
    void closeDoesNotCancelAndCancelStillWorksAfterIt() {
        CancellationSource source = new CancellationSource();
        AtomicInteger runs = new AtomicInteger();
        source.token().register(runs::incrementAndGet);

        source.close();
        source.close();

        assertFalse(source.isCancellationRequested());
        assertEquals(0, runs.get());
        assertTrue(source.cancel());
        assertEquals(1, runs.get());
    }

    private static int[] toArray(AtomicIntegerArray array) {
        int[] copy = new int[array.length()];
        for (int i = 0; i < copy.length; i++) {
            copy[i] = array.get(i);
        }
        return copy;
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneakyThrow(Throwable failure) throws T {
        throw (T) failure;
    }
}
