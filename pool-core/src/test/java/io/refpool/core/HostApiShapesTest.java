package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.testkit.TestKit;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The shapes a host writes its first hour in, each compiled as written here: a factory typed by
 * the variable the pool is assigned to, a disposer that throws a checked exception, void and
 * checked-exception bodies for {@code call}, {@code attached} and the {@code Handle}, and the
 * default mode.
 */
class HostApiShapesTest {
    /** An engine object whose close and work throw checked exceptions, as real engines' do. */
    static final class Engine {
        final String tenant;
        int counter;
        boolean closed;

        Engine(String tenant) {
            this.tenant = tenant;
        }

        void bump() {
            counter++;
        }

        void copyTo(Engine other) {
            other.counter = counter;
        }

        String render(String page) throws IOException {
            if (page.isEmpty()) {
                throw new IOException("no page named");
            }
            return tenant + "/" + page;
        }

        void close() throws IOException {
            closed = true;
            throw new IOException("closing " + tenant + " failed");
        }
    }

    private final List<PoolError> errors = new CopyOnWriteArrayList<>();

    @Test
    void aFactoryLambdaAndAConstructorReferenceTakeTheirTypesFromTheVariable() {
        try (RefPool<String, Engine> byLambda = RefPool.newBuilder().build(tenant -> new Engine(tenant));
                RefPool<String, Engine> byConstructor = RefPool.newBuilder().build(Engine::new)) {
            assertEquals("a", byLambda.call("a", engine -> engine.tenant));
            assertEquals("b", byConstructor.call("b", engine -> engine.tenant));
        }
    }

    @Test
    void theDefaultModeRunsTenantsInParallelEachObjectInItsSection() {
        try (RefPool<String, Engine> pool = RefPool.newBuilder().build(Engine::new)) {
            assertEquals(AttachMode.PER_OBJECT, pool.attachMode());
            // call holds the object's section: asking for it again on this thread is refused
            IllegalStateException again = assertThrows(
                    IllegalStateException.class,
                    () -> pool.call("a", engine -> {
                        try (Handle<Engine> handle = pool.acquire("a");
                                Guard section = handle.section()) {
                            return section;
                        }
                    }));
            assertTrue(again.getMessage().contains("already holds its section"), again.getMessage());
        }
    }

    @Test
    void aDisposerThatThrowsACheckedExceptionIsAMethodReferenceAndItsFailureIsReported() {
        List<Engine> made = new CopyOnWriteArrayList<>();
        try (RefPool<String, Engine> pool = RefPool.newBuilder()
                .disposer(Engine::close)
                .errorListener(errors::add)
                .build(tenant -> {
                    Engine engine = new Engine(tenant);
                    made.add(engine);
                    return engine;
                })) {
            pool.run("a", Engine::bump);
        }
        assertEquals(1, made.size());
        assertTrue(made.get(0).closed, "disposed");
        assertEquals(1, errors.size(), "the disposer's exception was reported: " + errors);
        assertEquals(PoolError.Kind.DISPOSER_FAILED, errors.get(0).kind());
        assertInstanceOf(IOException.class, errors.get(0).cause());
    }

    @Test
    void voidBodiesRunThroughRunAndRunAttached() {
        try (RefPool<String, Engine> pool = RefPool.newBuilder()
                .idle(cache -> cache.maximumSize(10)) // the objects keep their state between calls
                .build(Engine::new)) {
            AtomicInteger attachedRuns = new AtomicInteger();
            pool.runAttached(() -> {
                pool.run("a", engine -> engine.bump());
                attachedRuns.incrementAndGet();
            });
            pool.run("a", "b", (a, b) -> a.copyTo(b)); // copyTo returns nothing
            assertEquals(1, attachedRuns.get());
            int copied = pool.call("b", engine -> engine.counter);
            assertEquals(1, copied);
        }
    }

    @Test
    void aCheckedExceptionOfTheBodyReachesTheCallerUnchanged() {
        try (RefPool<String, Engine> pool = RefPool.newBuilder().build(Engine::new)) {
            IOException thrown = assertThrows(IOException.class, () -> pool.call("a", engine -> engine.render("")));
            assertEquals("no page named", thrown.getMessage());
            assertThrows(IOException.class, () -> pool.run("a", "b", (a, b) -> a.render("")));
            assertThrows(IOException.class, () -> pool.attached(() -> pool.call("a", engine -> engine.render(""))));
            assertThrows(
                    IOException.class,
                    () -> pool.runAttached(() -> {
                        throw new IOException("attached body");
                    }));
            try (Handle<Engine> handle = pool.attached(() -> pool.acquire("a"))) {
                assertThrows(IOException.class, () -> handle.call(engine -> engine.render("")));
                assertThrows(IOException.class, () -> handle.run(engine -> engine.render("")));
            }
        }
    }

    @Test
    void aCallAsyncBodyThatThrowsACheckedExceptionFailsItsStageWithIt() throws Exception {
        try (RefPool<String, Engine> pool = RefPool.newBuilder().build(Engine::new)) {
            CompletionException failed = assertThrows(CompletionException.class, () -> pool.callAsync(
                            "a", CancellationToken.none(), engine -> engine.render(""))
                    .toCompletableFuture()
                    .join());
            assertInstanceOf(IOException.class, failed.getCause());
            assertEquals(
                    "a/index",
                    pool.callAsync("a", CancellationToken.none(), engine -> engine.render("index"))
                            .toCompletableFuture()
                            .get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aKeptHandleRunsItsBodyAttachedAndInTheSectionWithoutComposingThemByHand() throws Exception {
        try (RefPool<String, Engine> pool = RefPool.newBuilder()
                .strictAccess(true)
                .idle(cache -> cache.maximumSize(10))
                .build(Engine::new)) {
            Handle<Engine> handle = pool.attached(() -> pool.acquire("a"));
            // on a thread that is not attached: handle.call attaches and takes the section itself
            String rendered = TestKit.fork("plugin", () -> handle.call(engine -> engine.render("x")))
                    .join();
            assertEquals("a/x", rendered);
            handle.run(Engine::bump);
            IllegalStateException inside =
                    assertThrows(IllegalStateException.class, () -> handle.call(engine -> handle.section()));
            assertTrue(inside.getMessage().contains("already holds its section"), inside.getMessage());
            pool.runAttached(handle::close);
            int counter = pool.call("a", engine -> engine.counter);
            assertEquals(1, counter, "the handle's body ran on the pool's object");
        }
    }

    @Test
    void aBuilderWithoutAFactoryOrWithTwoIsRefusedAtBuild() {
        IllegalStateException none = assertThrows(
                IllegalStateException.class, () -> RefPool.newBuilder().build());
        assertTrue(none.getMessage().contains("build(factory)"), none.getMessage());
        RefPool.Builder<String, Engine> given = RefPool.builder(Engine::new);
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> given.build(Engine::new));
        assertTrue(twice.getMessage().contains("call build()"), twice.getMessage());
        try (RefPool<String, Engine> pool = given.build()) { // the refusal changed nothing
            assertSame(AttachMode.PER_OBJECT, pool.attachMode());
        }
    }
}
