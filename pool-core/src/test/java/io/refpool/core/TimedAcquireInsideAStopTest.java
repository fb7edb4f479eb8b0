package io.refpool.core;

import static io.refpool.testkit.TestKit.awaitParked;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A timed acquire or call inside {@code stopTheWorld()} of an object it can have without waiting
 * (live, idle, or made there) keeps the stop: no other thread attaches meanwhile. Only a wait gives
 * the gate up, as the stop's javadoc says.
 */
class TimedAcquireInsideAStopTest {
    private static final Duration LIMIT = Duration.ofSeconds(5);

    private final TestResources resources = new TestResources();

    /** What the stop's thread does inside it, while another thread waits to attach. */
    @FunctionalInterface
    private interface Inside {
        void run(RefPool<String, Resource> pool) throws Exception;
    }

    private void insideAStopNoOtherThreadAttaches(RefPool<String, Resource> pool, Inside inside) throws Exception {
        AtomicBoolean stopOpen = new AtomicBoolean();
        AtomicBoolean attachedDuringTheStop = new AtomicBoolean();
        Forked<Void> other;
        try {
            try (Attachment stop = pool.stopTheWorld()) {
                stopOpen.set(true);
                other = forkRun("other attacher", () -> {
                    try (Attachment attached = pool.attach()) {
                        attachedDuringTheStop.set(stopOpen.get());
                    }
                });
                awaitParked(other.thread); // in line behind the stop
                inside.run(pool);
                assertFalse(attachedDuringTheStop.get(), "another thread attached inside the stop");
                stopOpen.set(false);
            }
            other.join();
        } finally {
            assertTrue(pool.close(Duration.ofSeconds(10)));
        }
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aTimedAcquireOfALiveObjectKeepsTheStop(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = resources.pool(mode);
        Handle<Resource> live;
        try (Attachment attached = pool.attach()) {
            live = pool.acquire("k");
        }
        insideAStopNoOtherThreadAttaches(pool, p -> {
            try (Handle<Resource> again = p.acquire("k", LIMIT)) {
                assertEquals("k", again.get().key);
            }
            live.close();
        });
        resources.assertAllDisposedOnceAttached();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aTimedAcquireOfAnIdleObjectKeepsTheStop(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool =
                resources.build(resources.builder().attachMode(mode).idle(cache -> cache.maximumSize(4)));
        Resource idle;
        try (Attachment attached = pool.attach();
                Handle<Resource> handle = pool.acquire("k")) {
            idle = handle.get();
        }
        insideAStopNoOtherThreadAttaches(pool, p -> {
            try (Handle<Resource> revived = p.acquire("k", LIMIT)) {
                assertEquals(idle, revived.get());
            }
        });
        resources.assertAllDisposedOnceAttached();
    }

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aTimedCallOfANewKeyKeepsTheStop(AttachMode mode) throws Exception {
        RefPool<String, Resource> pool = resources.pool(mode);
        insideAStopNoOtherThreadAttaches(pool, p -> assertEquals("k", p.call("k", LIMIT, r -> r.key)));
        resources.assertAllDisposedOnceAttached();
    }
}
