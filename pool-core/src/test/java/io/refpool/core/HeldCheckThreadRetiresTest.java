package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The held-too-long check's shared thread ends once no pool has a check queued, as the drainer
 * threads do: closing the last pool with a threshold leaves no refpool thread running for ever
 * (in a container, a thread that never ends also pins the application's class loader).
 */
class HeldCheckThreadRetiresTest {
    private static ScheduledThreadPoolExecutor checker() throws ReflectiveOperationException {
        Field executor =
                Class.forName("io.refpool.core.internal.Observer$Checker").getDeclaredField("EXECUTOR");
        executor.setAccessible(true);
        return (ScheduledThreadPoolExecutor) executor.get(null);
    }

    @Test
    void theCheckerThreadEndsOnceTheLastPoolWithAThresholdClosed() throws Exception {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .heldTooLong(Duration.ofMinutes(1)) // checked a second apart: queued, not running, when looked at
                .build();
        try (Attachment attached = pool.attach();
                Handle<StringBuilder> held = pool.acquire("a")) {
            assertTrue(pool.core().heldCheckScheduledForTests());
        }
        ScheduledThreadPoolExecutor checker = checker();
        assertTrue(checker.getPoolSize() > 0, "the check runs on the shared thread");
        pool.close();

        assertTrue(
                checker.allowsCoreThreadTimeOut(),
                "the held-too-long checker's thread never retires: it outlives every pool");
        if (checker.getQueue().isEmpty()) { // no other pool of this JVM watches its holds now
            checker.setKeepAliveTime(1, TimeUnit.MILLISECONDS); // instead of a minute; wakes the idle thread
            try {
                eventually().until(() -> checker.getPoolSize() == 0);
            } finally {
                checker.setKeepAliveTime(60, TimeUnit.SECONDS);
            }
        }
    }
}
