package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.WaitTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A thread that ends with an attachment open keeps its hold of the gate for ever: the pool cannot
 * take it back, but it names the thread ({@link PoolError.Kind#THREAD_ENDED_ATTACHED}) to whoever
 * then waits for the gate in vain (a close, a bounded close at its limit, a timed stop of the
 * world), once per thread; and the states it keeps to find such threads stay bounded.
 */
class ThreadEndedAttachedTest {
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    private RefPool<String, Object> pool(AttachMode mode) {
        return RefPool.builder((String key) -> new Object())
                .attachMode(mode)
                .name("ended")
                .errorListener(errors::add)
                .build();
    }

    /** Runs {@code work} on a thread named {@code name} and waits for it to end. */
    private static void runAndEnd(String name, Runnable work) throws InterruptedException {
        Thread thread = new Thread(work, name);
        thread.start();
        thread.join();
    }

    private List<PoolError> reported() {
        return errors.stream()
                .filter(e -> e.kind() == PoolError.Kind.THREAD_ENDED_ATTACHED)
                .toList();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aBoundedCloseNamesTheThreadItWaitsForOnce(AttachMode mode) throws Exception {
        RefPool<String, Object> pool = pool(mode);
        runAndEnd("dies-detached", () -> pool.attach().close());
        runAndEnd("dies-attached", pool::attach);

        assertFalse(pool.close(Duration.ofMillis(100)), "the dead thread's hold is never given back");
        assertFalse(pool.close(Duration.ofMillis(50)));

        List<PoolError> reported = reported();
        assertEquals(1, reported.size(), "once per thread, and only the one that ended attached: " + errors);
        String message = reported.get(0).message();
        assertTrue(message.contains("thread 'dies-attached' ended attached to pool 'ended'"), message);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aTimedStopOfTheWorldThatTimesOutNamesTheThread(AttachMode mode) throws Exception {
        RefPool<String, Object> pool = pool(mode);
        runAndEnd("dies-attached-too", pool::attach);

        assertThrows(WaitTimeoutException.class, () -> pool.stopTheWorld(Duration.ofMillis(50))
                .close());

        assertEquals(1, reported().size(), errors.toString());
        assertTrue(
                reported().get(0).message().contains("'dies-attached-too'"),
                reported().toString());
        pool.close(Duration.ZERO);
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void threadsThatEndedDetachedAreForgotten(AttachMode mode) throws Exception {
        RefPool<String, Object> pool = pool(mode);
        for (int i = 0; i < 1_000; i++) {
            runAndEnd("short-lived-" + i, () -> pool.call("k", o -> o));
        }
        int known = pool.core().knownThreads();
        assertTrue(known <= 128, "at most twice the threads alive, and the first sweep's 64: " + known);
        pool.close();
        assertTrue(reported().isEmpty(), errors.toString());
    }
}
