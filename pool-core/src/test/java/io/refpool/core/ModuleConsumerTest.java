package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.refpool.sync.AsyncMutex;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A named module that requires {@code io.refpool.core}, compiled and run with only pool-core,
 * pool-sync and Caffeine on its module path: Micrometer, which only {@code RefPoolMetrics} needs,
 * must not be needed by anyone else.
 */
class ModuleConsumerTest {
    private static final String MODULE_INFO = "module demo.host { requires io.refpool.core; }\n";

    private static final String MAIN = String.join(
            "\n",
            "package demo.host;",
            "import io.refpool.core.AttachMode;",
            "import io.refpool.core.RefPool;",
            "public final class Main {",
            "    public static void main(String[] args) {",
            "        try (RefPool<String, StringBuilder> pool = RefPool.builder((String tenant) -> new StringBuilder(tenant))",
            "                .attachMode(AttachMode.PER_OBJECT)",
            "                .idle(cache -> cache.maximumSize(4))",
            "                .build()) {",
            "            String out = pool.call(\"tenant-7\", session -> session.append(\" ran\").toString());",
            "            System.out.println(out);",
            "        }",
            "    }",
            "}",
            "");

    @Test
    void aNamedModuleThatRequiresCoreCompilesAndRunsWithoutMicrometer(@TempDir Path dir) throws Exception {
        String modulePath = Stream.of(RefPool.class, AsyncMutex.class, Caffeine.class)
                .map(ModuleConsumerTest::location)
                .map(Path::toString)
                .collect(Collectors.joining(File.pathSeparator));
        assertTrue(!modulePath.contains("micrometer"), modulePath);
        Path sources = dir.resolve("src/demo.host");
        Files.createDirectories(sources.resolve("demo/host"));
        Files.writeString(sources.resolve("module-info.java"), MODULE_INFO);
        Files.writeString(sources.resolve("demo/host/Main.java"), MAIN);
        Path classes = dir.resolve("classes");

        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        PrintStream report = new PrintStream(diagnostics, true, StandardCharsets.UTF_8);
        int status = javac.run(
                null,
                report,
                report,
                "--release",
                "17",
                "--module-path",
                modulePath,
                "-d",
                classes.toString(),
                sources.resolve("module-info.java").toString(),
                sources.resolve("demo/host/Main.java").toString());
        assertEquals(
                0,
                status,
                "a module requiring io.refpool.core must compile without Micrometer:\n"
                        + diagnostics.toString(StandardCharsets.UTF_8));

        Path launcher = Path.of(System.getProperty("java.home"), "bin", "java");
        Process run = new ProcessBuilder(
                        launcher.toString(),
                        "--module-path",
                        modulePath + File.pathSeparator + classes,
                        "-m",
                        "demo.host/demo.host.Main")
                .redirectErrorStream(true)
                .start();
        assertTrue(run.waitFor(60, TimeUnit.SECONDS), "the module's run did not end");
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, run.exitValue(), out);
        assertEquals(List.of("tenant-7 ran"), out.lines().collect(Collectors.toList()));
    }

    private static Path location(Class<?> type) {
        try {
            return Path.of(
                    type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
