package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.TestKit;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A {@code call} waiting, with the gate given up, for another thread's creation of its key when
 * the pool is closed: the close neither waits for it nor fails it while it waits, so once the
 * creation ends the call must fail as closed, never run its function after the close returned.
 */
class CloseWhileWaitingForACreationTest {
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    @ParameterizedTest
    @EnumSource(AttachMode.class)
    void aCallThatWaitedForACreationFailsAsClosedAndNeverRunsItsFunction(AttachMode mode) throws Exception {
        CountDownLatch factoryIn = new CountDownLatch(1);
        CountDownLatch factoryGo = new CountDownLatch(1);
        AtomicBoolean waiterRan = new AtomicBoolean();
        RefPool<String, Object> pool = RefPool.builder((String key) -> {
                    factoryIn.countDown();
                    assertTrue(factoryGo.await(30, TimeUnit.SECONDS));
                    return new Object();
                })
                .attachMode(mode)
                .errorListener(errors::add)
                .build();
        TestKit.Forked<Object> creator = TestKit.fork("creator", () -> pool.call("k", o -> o));
        assertTrue(factoryIn.await(30, TimeUnit.SECONDS));
        TestKit.Forked<Object> waiter = TestKit.fork(
                "waiter",
                () -> pool.call("k", o -> {
                    waiterRan.set(true);
                    return o;
                }));
        TestKit.awaitParked(waiter.thread); // waits for the creator's creation
        TestKit.Forked<Void> closer = TestKit.forkRun("closer", pool::close);
        TestKit.awaitParked(closer.thread); // closed, waiting for the creator
        factoryGo.countDown();
        creator.join();
        closer.join();
        assertInstanceOf(PoolClosedException.class, waiter.joinFailure());
        assertFalse(waiterRan.get(), "the function ran on a pool whose close had returned");
    }
}
