package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static io.refpool.testkit.TestKit.fork;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.refpool.core.internal.PoolHooks.Point;
import io.refpool.testkit.PointPauses;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * A release idles an object with a cache put, and then reads the object's count again to take a
 * disposed one back out. With revive checks on, a negative count may instead be an acquire
 * checking the object, which revives it if the check passes: the put must leave it cached. Taking
 * it out then raced the reviver's own release, which found it marked cached no more and put it
 * again: the late removal took that put away, and the object stayed idle, marked cached, outside
 * the cache, where it never expired and never counted against the bound.
 */
class IdlePutRacingARevivalCheckTest {
    /** A key whose hash, asked for on {@link #pausedThread}, runs {@link #pause} once first. */
    private static final class Key {
        final String name;

        Key(String name) {
            this.name = name;
        }

        @Override
        public int hashCode() {
            if (Thread.currentThread() == pausedThread) {
                pausedThread = null;
                pause.run();
            }
            return name.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Key && ((Key) other).name.equals(name);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static volatile Thread pausedThread;
    private static volatile Runnable pause = () -> {};

    @Test
    void aPutThatFindsTheObjectUnderARevivalCheckLeavesItCached() throws Exception {
        Key key = new Key("k");
        RefPool<Key, Object> pool = RefPool.newBuilder()
                .attachMode(AttachMode.SHARED)
                .drainDelay(Duration.ofHours(1))
                .validator((Key k, Object value) -> true)
                .idle(cache -> cache.maximumSize(100))
                .build((Key k) -> new Object());
        TestPoolHooks hooks = new TestPoolHooks();
        pool.core().setHooks(hooks);
        CountDownLatch releaserInRemove = new CountDownLatch(1);
        CountDownLatch reviverDone = new CountDownLatch(1);

        PointPauses.Pause inserted = hooks.pause(Point.AFTER_CACHE_INSERT, null);
        TestKit.Forked<Void> releaser = forkRun("releaser", () -> {
            pool.attached(() -> {
                pool.acquire(key).close(); // the first zero: a cache put
                return null;
            });
        });
        inserted.awaitArrival();
        PointPauses.Pause claimed = hooks.pause(Point.REVIVE_CLAIMED, null);
        TestKit.Forked<Object> reviver = fork(
                "reviver",
                () -> pool.attached(() -> {
                    try (Handle<Object> revived = pool.acquire(key)) {
                        return revived.get();
                    }
                }));
        claimed.awaitArrival(); // the count is CHECKING now

        pausedThread = releaser.thread; // its next hash: the cache removal, if it takes the object out
        pause = () -> {
            releaserInRemove.countDown();
            TestKeyedPoolFixtures.awaitLatch(reviverDone);
        };
        inserted.proceed();
        eventually().until(() -> releaserInRemove.getCount() == 0 || !releaser.thread.isAlive());
        claimed.proceed(); // the check passes; the reviver's close idles it again
        Object value = reviver.join();
        reviverDone.countDown();
        releaser.join();

        assertEquals(1, pool.core().control().cachedCountAsItIs(), "the idle object is in the cache");
        assertEquals(1, pool.stats().idle());
        try (Attachment attached = pool.attach();
                Handle<Object> again = pool.acquire(key)) {
            assertSame(value, again.get(), "revived from the cache");
        }
        pool.close();
        assertEquals(1, pool.stats().disposals());
    }
}
