package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The threads refpool starts and every pool may then share copy nothing from the thread that
 * happened to start them, a plugin's, say: a context class loader they kept would pin the plugin
 * for as long as they run. This class runs in a JVM of its own (the build runs each *OwnJvmTest so): the threads seen here are
 * the ones this test started.
 */
class SharedThreadsInheritNothingOwnJvmTest {
    private static final List<String> SHARED =
            List.of("refpool-drainer-", "refpool-held-check", "refpool-lease-sweeper", "refpool-leak-detector");

    private static Set<Thread> refpoolThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("refpool-"))
                .collect(Collectors.toSet());
    }

    private static boolean running(String prefix) {
        return refpoolThreads().stream().anyMatch(t -> t.getName().startsWith(prefix));
    }

    @Test
    void sharedThreadsStartedForAPluginKeepNoneOfItsClassLoader() throws Exception {
        URLClassLoader pluginLoader = new URLClassLoader(new URL[0], getClass().getClassLoader());
        List<Throwable> failed = new ArrayList<>();
        Thread plugin = new Thread(
                () -> {
                    try {
                        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                                .heldTooLong(Duration.ofMinutes(1))
                                .threadLeases(Duration.ofMillis(10))
                                .leakDetection(LeakDetection.PARANOID)
                                .drainThreshold(1)
                                .build();
                        Handle<StringBuilder> h;
                        try (Attachment attached = pool.attach()) {
                            h = pool.acquire("k");
                        }
                        h.close(); // off the attachment: a drainer applies it
                        eventually()
                                .until(() -> SHARED.stream().allMatch(SharedThreadsInheritNothingOwnJvmTest::running));
                        pool.close();
                    } catch (Throwable t) {
                        failed.add(t);
                    }
                },
                "plugin");
        plugin.setContextClassLoader(pluginLoader);
        plugin.start();
        plugin.join();
        assertEquals(List.of(), failed);

        List<String> keeping = new ArrayList<>();
        for (Thread t : refpoolThreads()) {
            if (t.getContextClassLoader() == pluginLoader) {
                keeping.add(t.getName());
            }
        }
        assertTrue(
                SHARED.stream().allMatch(SharedThreadsInheritNothingOwnJvmTest::running),
                refpoolThreads().toString());
        assertEquals(List.of(), keeping, "threads that keep the plugin's class loader");
    }
}
