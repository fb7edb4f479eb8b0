package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.testkit.AllocationMeter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The uncontended paths of {@link AsyncSharedMutex} allocate nothing once the JIT compiled the
 * caller, measured with the thread's allocation counter.
 *
 * <p>The measurements run in a JVM of their own ({@link #main}). In the JVM that runs the other
 * tests, the contended tests make the slow path of the acquire methods hot; C2 then compiles that
 * path into them, the compiled methods grow past what it inlines into a caller, and the guard they
 * return escapes (24 bytes per acquire). That is what a program that also contends pays; the claim
 * measured here is the uncontended one.
 */
class AsyncSharedMutexAllocationTest {
    private static final int OPS = 200_000;

    private static final Map<String, AllocationMeter.Op> SCENARIOS = new LinkedHashMap<>();
    private static Map<String, Double> bytesPerOp;

    static {
        AsyncSharedMutex lock = new AsyncSharedMutex();
        SCENARIOS.put("tryLockShared+unlockShared", () -> {
            if (!lock.tryLockShared()) {
                throw new AssertionError("uncontended tryLockShared failed");
            }
            lock.unlockShared();
        });
        AsyncSharedMutex besideAReader = new AsyncSharedMutex();
        besideAReader.tryLockShared(); // a reader that stays
        SCENARIOS.put("tryLockShared+unlockShared beside a reader", () -> {
            if (!besideAReader.tryLockShared()) {
                throw new AssertionError("uncontended tryLockShared failed");
            }
            besideAReader.unlockShared();
        });
        SCENARIOS.put("acquireSharedBlocking+close", () -> {
            try (Guard g = lock.acquireSharedBlocking()) {
                if (lock.readers() != 1) {
                    throw new AssertionError("expected one reader");
                }
            }
        });
        SCENARIOS.put("tryLock+unlock", () -> {
            if (!lock.tryLock()) {
                throw new AssertionError("uncontended tryLock failed");
            }
            lock.unlock();
        });
        SCENARIOS.put("acquireBlocking+close", () -> {
            try (Guard g = lock.acquireBlocking()) {
                if (!lock.isWriteLocked()) {
                    throw new AssertionError("expected the writer to hold");
                }
            }
        });
    }

    /** Runs in its own JVM: measures every scenario and prints "bytes name" lines. */
    public static void main(String[] args) throws Exception {
        // every scenario once through the interpreter first, so that every class their calls name is
        // loaded before C2 compiles any of them: a call compiled while a class in its signature was
        // still unloaded is not inlined ("unloaded signature classes"), and its guard then escapes
        for (AllocationMeter.Op op : SCENARIOS.values()) {
            for (int i = 0; i < 100; i++) {
                op.run();
            }
        }
        for (Map.Entry<String, AllocationMeter.Op> scenario : SCENARIOS.entrySet()) {
            System.out.println(AllocationMeter.bytesPerOp(OPS, scenario.getValue()) + " " + scenario.getKey());
        }
    }

    @BeforeAll
    static void measureInAFreshJvm() throws IOException, InterruptedException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(List.of(
                        java.toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        AsyncSharedMutexAllocationTest.class.getName()))
                .redirectErrorStream(true)
                .start();
        String output;
        try (InputStream out = child.getInputStream()) {
            output = new String(out.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(child.waitFor(2, TimeUnit.MINUTES), "the measuring JVM did not exit");
        assertEquals(0, child.exitValue(), output);
        bytesPerOp = new LinkedHashMap<>();
        for (String line : output.split("\\R")) {
            int space = line.indexOf(' ');
            if (space > 0 && SCENARIOS.containsKey(line.substring(space + 1))) {
                bytesPerOp.put(line.substring(space + 1), Double.parseDouble(line.substring(0, space)));
            }
        }
        assertEquals(SCENARIOS.keySet(), bytesPerOp.keySet(), output);
    }

    private static void assertAllocatesNothing(String scenario) {
        double bytes = bytesPerOp.get(scenario);
        assertTrue(bytes < 1, scenario + ": bytes/op " + bytes);
    }

    @Test
    void tryLockSharedAndUnlockSharedAllocateNothing() {
        assertAllocatesNothing("tryLockShared+unlockShared");
    }

    @Test
    void tryLockSharedAndUnlockSharedBesideAnotherReaderAllocateNothing() {
        assertAllocatesNothing("tryLockShared+unlockShared beside a reader");
    }

    @Test
    void blockingSharedAcquireAndCloseAllocateNothing() {
        assertAllocatesNothing("acquireSharedBlocking+close");
    }

    @Test
    void tryLockAndUnlockAllocateNothing() {
        assertAllocatesNothing("tryLock+unlock");
    }

    @Test
    void blockingExclusiveAcquireAndCloseAllocateNothing() {
        assertAllocatesNothing("acquireBlocking+close");
    }
}
