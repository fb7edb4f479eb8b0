package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.fork;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.refpool.core.internal.PoolTimings;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code call(key, timeout, fn)} is observed as every call is: its function is the hold and the
 * use, not the handle the pool takes for it, whose life includes the waits for the gate and the
 * section.
 */
class TimedCallObservedAsACallTest {
    private static final Duration HOUR = Duration.ofHours(1);
    private static final long PAST_AN_HOUR = HOUR.toNanos() + TimeUnit.SECONDS.toNanos(1);

    @Test
    void aTimedCallIsHeldTooLongAsACall() {
        List<PoolError> errors = new CopyOnWriteArrayList<>();
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .heldTooLong(HOUR)
                .errorListener(errors::add)
                .build();
        int reported = pool.call(
                "b", Duration.ofSeconds(30), sb -> pool.core().checkHeldForTests(System.nanoTime() + PAST_AN_HOUR));
        assertEquals(1, reported);
        assertTrue(errors.get(0).message().startsWith("a call"), errors.get(0).message());
        pool.close();
    }

    /** The use a timed call records is its function's, not its wait for the section. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aTimedCallsUseIsItsFunctionNotItsWaitForTheSection(boolean timed) throws Exception {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .attachMode(AttachMode.PER_OBJECT)
                .recordTimings(true)
                .build();
        Map<Thread, Map<PoolTimings.Timing, AtomicLong>> byThread = new ConcurrentHashMap<>();
        pool.core().timings().add((timing, nanos) -> byThread.computeIfAbsent(
                        Thread.currentThread(), t -> new ConcurrentHashMap<>())
                .computeIfAbsent(timing, t -> new AtomicLong())
                .addAndGet(nanos));
        Forked<Integer> caller;
        try (Attachment attached = pool.attach();
                Handle<StringBuilder> holder = pool.acquire("a");
                Guard section = holder.section()) {
            caller = fork(
                    "caller",
                    () -> timed
                            ? pool.call("a", Duration.ofSeconds(30), StringBuilder::length)
                            : pool.call("a", StringBuilder::length));
            awaitParked(caller.thread);
            Thread.sleep(100); // the caller's parked wait for the section grows; nothing races
        }
        assertEquals(1, caller.join()); // the object of key "a"
        Map<PoolTimings.Timing, AtomicLong> its = byThread.get(caller.thread);
        long sectionWait = its.get(PoolTimings.Timing.SECTION_WAIT).get();
        long use = its.get(PoolTimings.Timing.USE).get();
        assertTrue(sectionWait >= TimeUnit.MILLISECONDS.toNanos(100), "waited " + sectionWait + " ns");
        assertTrue(
                use < sectionWait / 2,
                "a function that returned at once used the object " + use + " ns, having waited " + sectionWait
                        + " ns for its section");
        pool.close();
    }

    /** {@code refpool.creation} times the factory's calls that returned an object, as creations counts them. */
    @Test
    void aFactoryThatReturnedNullIsNotACreation() {
        AtomicInteger calls = new AtomicInteger();
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(
                        k -> calls.getAndIncrement() == 0 ? null : new StringBuilder(k))
                .name("nulls")
                .recordTimings(true)
                .errorListener(e -> {})
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RefPoolMetrics(pool).bindTo(registry);
        Timer creation = registry.find("refpool.creation").timer();
        try {
            pool.call("a", sb -> sb);
        } catch (NullPointerException expected) {
            // the factory returned null
        }
        pool.call("a", sb -> sb);
        assertEquals(1, pool.stats().creations());
        assertEquals(1, creation.count());
        pool.close();
    }
}
