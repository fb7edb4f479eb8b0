package io.refpool.core;

import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The code of {@code docs/guide.md}, compiled and run. Each sample sits between
 * {@code // tag::name[]} and {@code // end::name[]}; {@link #theGuideShowsTheseSamplesVerbatim}
 * checks that every {@code java} block of the guide, marked {@code <!-- sample: name -->}, is that
 * region, so the guide cannot drift from code that works.
 */
class GuideSamplesTest {
    private static final Path GUIDE = Path.of("../docs/guide.md");
    private static final Path SOURCE = Path.of("src/test/java/io/refpool/core/GuideSamplesTest.java");

    // ------------------------------------------------------------------ a tiny fake engine

    /** An engine session: expensive to open, closed exactly once. */
    static final class Session {
        final String tenant;
        final AtomicInteger closes = new AtomicInteger();

        Session(String tenant) {
            this.tenant = tenant;
        }

        String query(String sql) {
            if (closes.get() > 0) {
                throw new IllegalStateException("session for " + tenant + " is closed");
            }
            return tenant + ": " + sql;
        }

        void close() {
            closes.incrementAndGet();
        }
    }

    /** The engine: opens sessions and remembers them, so the test can check they were closed. */
    static final class Engine {
        final List<Session> opened = new CopyOnWriteArrayList<>();

        Session open(String tenant) {
            Session session = new Session(tenant);
            opened.add(session);
            return session;
        }

        boolean allClosedOnce() {
            return opened.stream().allMatch(s -> s.closes.get() == 1);
        }
    }

    /** A plugin: does its work on its own threads. */
    interface Plugin {
        void start(SessionHost host);
    }

    private final Engine engine = new Engine();
    private final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private final ExecutorService pluginThreads = Executors.newFixedThreadPool(2);
    private RefPool<String, Session> sessions;

    @AfterEach
    void stopPluginThreads() throws InterruptedException {
        pluginThreads.shutdownNow();
        assertTrue(pluginThreads.awaitTermination(10, TimeUnit.SECONDS));
        if (sessions != null) {
            sessions.close();
        }
    }

    private RefPool<String, Session> buildPool() {
        // tag::build[]
        RefPool<String, Session> sessions = RefPool.builder((String tenant) -> engine.open(tenant))
                .disposer(Session::close) // runs attached, exactly once per session
                .attachMode(AttachMode.SHARED) // the engine lets many threads in at once
                .maxObjects(32) // live plus idle sessions
                .idle(cache -> cache.maximumSize(8).expireAfterAccess(Duration.ofMinutes(5)))
                .errorListener(errors::add) // default: System.Logger "io.refpool", WARNING
                .build();
        // end::build[]
        this.sessions = sessions;
        return sessions;
    }

    // tag::host[]
    /** Lends engine sessions to plugins and takes back what they leave open when unloaded. */
    static final class SessionHost {
        private final RefPool<String, Session> sessions;
        private final Map<String, List<Handle<Session>>> lent = new ConcurrentHashMap<>();

        SessionHost(RefPool<String, Session> sessions) {
            this.sessions = sessions;
        }

        /** A handle to the tenant's session for {@code plugin}, which closes it on any thread. */
        Handle<Session> lend(String plugin, String tenant) {
            try (Attachment attached = sessions.attach()) {
                Handle<Session> handle = sessions.acquire(tenant);
                List<Handle<Session>> handles = lent.computeIfAbsent(plugin, p -> new CopyOnWriteArrayList<>());
                handles.removeIf(h -> !h.isOpen()); // forget those the plugin closed already
                handles.add(handle);
                return handle;
            }
        }

        /** Closes, attached, every handle the plugin did not close itself. */
        void unload(String plugin) {
            List<Handle<Session>> handles = lent.remove(plugin);
            if (handles == null) {
                return;
            }
            try (Attachment attached = sessions.attach()) {
                for (Handle<Session> handle : handles) {
                    if (handle.isOpen()) {
                        handle.close(); // a second close, racing the plugin's own, is a no-op
                    }
                }
            }
        }
    }
    // end::host[]

    @Test
    void aPluginClosesItsHandleOnItsOwnThread() throws Exception {
        SessionHost sessionHost = new SessionHost(buildPool());
        CompletableFuture<String> answer = new CompletableFuture<>();
        // tag::plugin[]
        Plugin reports = host -> {
            Handle<Session> session = host.lend("reports", "tenant-7");
            pluginThreads.execute(() -> {
                try (session) { // closed off-attachment: a pending release, applied attached later
                    answer.complete(session.get().query("select count(*) from orders"));
                }
            });
        };
        // end::plugin[]
        reports.start(sessionHost);
        assertEquals("tenant-7: select count(*) from orders", answer.get(10, TimeUnit.SECONDS));
        eventually().until(() -> sessions.stats().idle() == 1); // the drainer applied the release
        assertEquals(1, engine.opened.size());
        assertEquals(0, engine.opened.get(0).closes.get(), "idle, not closed");
    }

    @Test
    void unloadingAPluginClosesWhatItLeftOpen() {
        SessionHost host = new SessionHost(buildPool());
        Handle<Session> forgotten = host.lend("exporter", "tenant-9");
        Handle<Session> closed = host.lend("exporter", "tenant-9");
        closed.close();
        // tag::unload[]
        host.unload("exporter"); // the plugin's threads are stopped; its open handles close now
        // end::unload[]
        assertFalse(forgotten.isOpen());
        assertEquals(0, sessions.stats().live());
        assertEquals(1, sessions.stats().idle());
    }

    @Test
    void capacityAndAsyncAcquire() throws Exception {
        RefPool<String, Session> sessions = buildPool();
        List<Handle<Session>> busy = new ArrayList<>();
        try (Attachment attached = sessions.attach()) {
            for (int i = 0; i < 32; i++) {
                busy.add(sessions.acquire("tenant-" + i));
            }
        }
        pluginThreads.execute(() -> {
            eventually().until(() -> sessions.stats().capacityWaiters() == 1);
            try (Attachment attached = sessions.attach()) {
                busy.get(0).close(); // disposed, not idled: its permit goes to the waiter in line
            }
        });
        // tag::async[]
        Handle<Session> session;
        try (Attachment attached = sessions.attach()) {
            session = sessions.acquire("tenant-99");
        } catch (CapacityExhaustedException full) {
            // an attached acquire never waits for capacity: it would hold the gate that the
            // releases it waits for need. acquireAsync waits in line (FIFO), detached.
            CancellationSource deadline = new CancellationSource();
            deadline.cancelAfter(Duration.ofSeconds(5));
            session = sessions.acquireAsync("tenant-99", deadline.token())
                    .toCompletableFuture()
                    .join(); // fails with a CancellationException after five seconds
        }
        // end::async[]
        assertEquals("tenant-99", session.get().tenant);
        try (Attachment attached = sessions.attach()) {
            session.close();
            busy.subList(1, busy.size()).forEach(Handle::close);
        }
    }

    @Test
    void theIdleCacheRevivesSessions() {
        RefPool<String, Session> sessions = buildPool();
        // tag::idle[]
        try (Attachment attached = sessions.attach()) {
            Session first;
            try (Handle<Session> session = sessions.acquire("tenant-7")) {
                first = session.get();
            } // count 0: the session idles in the cache
            try (Handle<Session> session = sessions.acquire("tenant-7")) {
                assert session.get() == first; // revived: no second engine.open
            }
        }
        // end::idle[]
        assertEquals(1, engine.opened.size());
        assertEquals(1, sessions.stats().idleHits());
    }

    @Test
    void statsAndLeakReports() {
        RefPool<String, Session> sessions = buildPool();
        try (Attachment attached = sessions.attach()) {
            sessions.acquire("tenant-7").close();
        }
        Map<String, Long> printed = new LinkedHashMap<>();
        // tag::stats[]
        PoolStats stats = sessions.stats();
        printed.put("live", stats.live()); // sessions with open handles
        printed.put("idle", stats.idle()); // sessions in the idle cache
        printed.put("pending", stats.pendingDecrements()); // closes not applied yet
        printed.put("waiting", stats.capacityWaiters()); // acquireAsync calls in line
        printed.put("expired", stats.evictions(EvictionCause.EXPIRED));
        printed.put("leaks", stats.leaks()); // handles collected while open
        for (PoolError error : errors) {
            if (error.kind() == PoolError.Kind.HANDLE_LEAKED) {
                System.Logger log = System.getLogger("plugins");
                log.log(System.Logger.Level.ERROR, error.message(), error.cause()); // cause: where
            }
        }
        // end::stats[]
        assertEquals(Map.of("live", 0L, "idle", 1L, "pending", 0L, "waiting", 0L, "expired", 0L, "leaks", 0L), printed);
    }

    @Test
    void leakDetectionReportsWhereALeakedHandleWasAcquired() {
        // tag::leaks[]
        RefPool<String, Session> sessions = RefPool.builder((String tenant) -> engine.open(tenant))
                .disposer(Session::close)
                .leakDetection(LeakDetection.PARANOID) // every handle's site; SAMPLED in production
                .errorListener(errors::add)
                .build();
        // end::leaks[]
        this.sessions = sessions;
        leakOne(sessions);
        eventually().pollInterval(Duration.ofMillis(50)).until(() -> {
            System.gc();
            return engine.allClosedOnce() && !engine.opened.isEmpty();
        });
        PoolError leak = errors.get(0);
        assertEquals(PoolError.Kind.HANDLE_LEAKED, leak.kind());
        assertTrue(List.of(leak.cause().getStackTrace()).stream()
                .anyMatch(frame -> frame.getMethodName().equals("leakOne")));
    }

    private static void leakOne(RefPool<String, Session> sessions) {
        try (Attachment attached = sessions.attach()) {
            sessions.acquire("tenant-7"); // never closed
        }
    }

    @Test
    void closingThePool() throws Exception {
        SessionHost host = new SessionHost(buildPool());
        Handle<Session> stillOpen = host.lend("reports", "tenant-7");
        host.lend("reports", "tenant-8").close();
        Session live = stillOpen.get();
        // tag::close[]
        sessions.close(); // waiters fail, idle sessions close now, open handles are reported
        pluginThreads.execute(stillOpen::close); // its session closes with this last handle
        // end::close[]
        eventually().until(() -> live.closes.get() == 1);
        assertTrue(engine.allClosedOnce());
        assertEquals(
                List.of(PoolError.Kind.HANDLES_OPEN_AT_CLOSE),
                errors.stream().map(PoolError::kind).collect(java.util.stream.Collectors.toList()));
    }

    // ------------------------------------------------------------------ the guide is this code

    @Test
    void theGuideShowsTheseSamplesVerbatim() throws IOException {
        Map<String, String> regions = regions(Files.readString(SOURCE, StandardCharsets.UTF_8));
        String guide = Files.readString(GUIDE, StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("(?:<!-- sample: ([\\w-]+) -->\\n)?```java\\n(.*?)```", Pattern.DOTALL)
                .matcher(guide);
        List<String> shown = new ArrayList<>();
        while (block.find()) {
            String name = block.group(1);
            assertTrue(name != null, "a java block of the guide without a sample marker:\n" + block.group(2));
            assertTrue(regions.containsKey(name), "no region '" + name + "' in " + SOURCE);
            assertEquals(regions.get(name), block.group(2), "the guide's sample '" + name + "'");
            shown.add(name);
        }
        assertEquals(regions.keySet(), new java.util.LinkedHashSet<>(shown), "every sample is shown once");
        assertEquals(regions.size(), shown.size(), "every sample is shown once");
    }

    /** The tagged regions of {@code source}, each dedented, with a trailing newline. */
    static Map<String, String> regions(String source) {
        Map<String, String> regions = new LinkedHashMap<>();
        Matcher region = Pattern.compile("// tag::([\\w-]+)\\[]\\n(.*?)\\n[ \\t]*// end::\\1\\[]", Pattern.DOTALL)
                .matcher(source);
        while (region.find()) {
            regions.put(region.group(1), dedent(region.group(2)));
        }
        return regions;
    }

    private static String dedent(String text) {
        String[] lines = text.split("\\n", -1);
        int indent = Integer.MAX_VALUE;
        for (String line : lines) {
            if (!line.isBlank()) {
                indent = Math.min(indent, line.length() - line.stripLeading().length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return out.toString();
    }
}
