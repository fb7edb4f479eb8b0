package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A JVM whose pools track no handle runs no leak detector thread, which would run for as long as
 * the JVM. This test class runs in a JVM of its own (the build runs each *OwnJvmTest so).
 */
class NoLeakDetectorThreadOwnJvmTest {
    @Test
    void aPoolWithoutLeakDetectionStartsNoLeakDetector() {
        RefPool<String, StringBuilder> pool = RefPool.<String, StringBuilder>builder(StringBuilder::new)
                .leakDetection(LeakDetection.OFF)
                .build();
        try (Attachment attached = pool.attach();
                Handle<StringBuilder> h = pool.acquire("k")) {
            h.get();
        }
        pool.close();
        List<String> detectors = Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .filter(name -> name.startsWith("refpool-leak-detector"))
                .collect(Collectors.toList());
        assertEquals(List.of(), detectors);
    }
}
