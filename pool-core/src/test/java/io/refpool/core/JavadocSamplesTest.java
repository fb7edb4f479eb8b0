package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.MeterRegistry;
import io.refpool.sync.CancellationToken;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every {@code <pre>{@code ...}</pre>} sample in the javadoc of pool-core's and pool-sync's public types, compiled:
 * each becomes the body of a method of one class whose fields stand for what the samples name (an
 * {@code engine} that opens a {@code Session}, a {@code pool}, an {@code executor}, a {@code token},
 * a {@code log}). A sample that calls a method the API does not have, or uses it with the wrong
 * types, fails here.
 */
class JavadocSamplesTest {
    private static final Path PUBLIC_API = Path.of("src/main/java/io/refpool/core");
    /** pool-sync's public types, whose samples name only the JDK and pool-sync. */
    private static final Path SYNC_API = Path.of("../pool-sync/src/main/java/io/refpool/sync");

    private static final Pattern SAMPLE = Pattern.compile("<pre>\\{@code\\n(.*?)\\n\\s*\\* }</pre>", Pattern.DOTALL);

    private static final String PREAMBLE = String.join(
            "\n",
            "import io.micrometer.core.instrument.MeterRegistry;",
            "import io.micrometer.core.instrument.Tags;",
            "import io.refpool.core.*;",
            "import io.refpool.sync.*;",
            "import java.nio.file.Path;",
            "import java.time.Duration;",
            "import java.util.*;",
            "import java.util.concurrent.*;",
            "abstract class Samples {",
            "    interface Session {",
            "        String query(String sql);",
            "        void ping();",
            "        void refresh();",
            "        void store(String report);",
            "        void close();",
            "        boolean copyTo(Session other);",
            "        void mergeInto(Session other);",
            "        String render(String page) throws java.io.IOException;",
            "        void execute(String sql) throws java.io.IOException;",
            "    }",
            "    static final class Interpreter {",
            "        Interpreter(String tenant) {}",
            "        int eval(String script) { return 42; }",
            "        void close() throws java.io.IOException {}",
            "    }",
            "    interface Engine { Session open(String tenant); }",
            "    interface Http { String get(String url); }",
            "    interface Log { void warn(String message, Throwable cause); }",
            "    interface Script { void release(); }",
            "    interface Compiler { Script compile(Path path); }",
            "    Engine engine;",
            "    RefPool<String, Session> pool;",
            "    Executor executor;",
            "    Http http;",
            "    String url;",
            "    Log log;",
            "    CancellationToken token;",
            "    String key;",
            "    Handle<Session> handle;",
            "    Map<String, Handle<Session>> sessions;",
            "    Map<String, Handle<Session>> kept;",
            "    String tenant;",
            "    String script;",
            "    Compiler compiler;",
            "    MeterRegistry registry;",
            "");

    /** What pool-sync's samples name: its own types, the JDK, and a pool for the one that attaches. */
    private static final String SYNC_PREAMBLE = String.join(
            "\n",
            "import io.refpool.core.*;",
            "import io.refpool.sync.*;",
            "import java.io.IOException;",
            "import java.nio.file.Path;",
            "import java.time.Duration;",
            "import java.util.*;",
            "abstract class SyncSamples {",
            "    interface Item {}",
            "    interface Scene { void update(); }",
            "    interface Connection { void abort(); void send(String request); }",
            "    interface Response { boolean arrived(); }",
            "    interface Batch { void discard(); void release(); }",
            "    interface Log { void info(String message); void warn(String message); }",
            "    int counter;",
            "    AsyncMutex mutex;",
            "    CancellationToken token;",
            "    CancellationSource source;",
            "    CancellationSource shutdown;",
            "    CancellationSource client;",
            "    java.nio.channels.ReadableByteChannel channel;",
            "    java.nio.ByteBuffer buffer;",
            "    List<Item> items;",
            "    Scene scene;",
            "    Connection connection;",
            "    String request;",
            "    Response response;",
            "    Batch batch;",
            "    Log log;",
            "    Path from;",
            "    Path to;",
            "    RefPool<String, Object> pool;",
            "    abstract void doSomeWork();",
            "    abstract void serve(Object request);",
            "    abstract void reconfigure();",
            "    abstract void ping();",
            "    abstract void render(Scene scene);",
            "    abstract void copy(Path from, Path to) throws IOException;",
            "    abstract void process(Item item);",
            "    abstract void onTimeout();",
            "");

    /** A sample and where it is. */
    record Sample(String file, int index, String code) {}

    static List<Sample> samples(Path api) throws IOException {
        List<Sample> samples = new ArrayList<>();
        try (Stream<Path> files = Files.list(api)) {
            for (Path file :
                    files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Matcher sample = SAMPLE.matcher(Files.readString(file, StandardCharsets.UTF_8));
                for (int i = 0; sample.find(); i++) {
                    String code = sample.group(1)
                            .lines()
                            .map(line -> line.replaceFirst("^\\s*\\* ?", ""))
                            .collect(Collectors.joining("\n"));
                    samples.add(new Sample(file.getFileName().toString(), i, code));
                }
            }
        }
        return samples;
    }

    @Test
    void everySampleInPoolCoresJavadocCompiles() throws Exception {
        assertCompile(samples(PUBLIC_API), PREAMBLE, "Samples");
    }

    @Test
    void everySampleInPoolSyncsJavadocCompiles() throws Exception {
        assertCompile(samples(SYNC_API), SYNC_PREAMBLE, "SyncSamples");
    }

    /** Compiles each sample as the body of a method of the class {@code preamble} opens. */
    private static void assertCompile(List<Sample> samples, String preamble, String className) throws Exception {
        assertTrue(samples.size() >= 15, "the samples were found: " + samples.size());
        StringBuilder source = new StringBuilder(preamble);
        List<int[]> lines = new ArrayList<>(); // per sample: first and last line in the source
        for (Sample sample : samples) {
            int first = (int) source.chars().filter(c -> c == '\n').count() + 2;
            source.append("    void sample").append(lines.size()).append("() throws Exception {\n");
            source.append(sample.code()).append("\n    }\n");
            lines.add(new int[] {
                first, (int) source.chars().filter(c -> c == '\n').count()
            });
        }
        source.append("}\n");

        List<String> errors = compile(source.toString(), className).stream()
                .filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .map(d -> {
                    int line = (int) d.getLineNumber();
                    String where = "?";
                    for (int i = 0; i < lines.size(); i++) {
                        if (line >= lines.get(i)[0] && line <= lines.get(i)[1]) {
                            where = samples.get(i).file() + " sample "
                                    + samples.get(i).index();
                        }
                    }
                    return where + ": " + d.getMessage(Locale.ROOT);
                })
                .toList();
        assertEquals(List.of(), errors);
    }

    private static List<Diagnostic<? extends JavaFileObject>> compile(String source, String className)
            throws IOException, URISyntaxException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        String classPath = Stream.of(RefPool.class, CancellationToken.class, Caffeine.class, MeterRegistry.class)
                .map(JavadocSamplesTest::location)
                .collect(Collectors.joining(java.io.File.pathSeparator));
        Path out = Files.createTempDirectory("javadoc-samples");
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, null)) {
            JavaFileObject unit =
                    new SimpleJavaFileObject(
                            java.net.URI.create("string:///" + className + ".java"), JavaFileObject.Kind.SOURCE) {
                        @Override
                        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                            return source;
                        }
                    };
            javac.getTask(
                            null,
                            files,
                            diagnostics,
                            List.of("-classpath", classPath, "-d", out.toString(), "-proc:none"),
                            null,
                            List.of(unit))
                    .call();
        }
        return diagnostics.getDiagnostics();
    }

    private static String location(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
