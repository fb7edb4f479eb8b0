package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.internal.ReleaseQueueHooks;
import io.refpool.testkit.TestKit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Fixtures of the keyed-pool tests: a fake engine whose sessions record how they were disposed, a
 * Caffeine ticker the test moves, release-queue hooks that pause one thread at a named point, and
 * thread helpers.
 */
final class TestKeyedPoolFixtures {
    private TestKeyedPoolFixtures() {}

    /** An engine object. */
    static final class Session {
        final String key;
        final int serial;
        /** How often the disposer ran on this session; must end at exactly 1. */
        final AtomicInteger disposals = new AtomicInteger();
        /** Set when the disposer of this session has returned. */
        volatile boolean disposerReturned;
        /** Handles the test holds open on this session, kept by tests that audit it. */
        final AtomicInteger openHandles = new AtomicInteger();

        Session(String key, int serial) {
            this.key = key;
            this.serial = serial;
        }

        boolean isDisposed() {
            return disposals.get() > 0;
        }

        @Override
        public String toString() {
            return "Session[" + key + " #" + serial + "]";
        }
    }

    /**
     * A fake engine: the pool's factory and disposer. The disposer audits each disposal: it must run
     * attached, once per session, and never while the test holds a handle open on the session.
     */
    static final class Engine implements ObjectFactory<String, Session>, Function<String, Session>, Consumer<Session> {
        final AtomicInteger factoryCalls = new AtomicInteger();
        final List<Session> created = new CopyOnWriteArrayList<>();
        final List<Session> disposed = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        final List<PoolError> errors = new CopyOnWriteArrayList<>();
        /** Runs first in every factory call: tests hold or fail creations with it. */
        volatile Consumer<String> beforeCreate = key -> {};
        /**
         * Which earlier sessions a new one of their key may be created beside: an object invalidated
         * while in use is replaced at once. None, unless a test that invalidates says otherwise.
         */
        volatile java.util.function.Predicate<Session> replacedAtOnce = session -> false;
        /** Runs on every new session before the pool gets it: tests record what they need of it. */
        volatile Consumer<Session> afterCreate = session -> {};
        /** Runs after the audit in every disposal: tests fail disposals with it. */
        volatile Consumer<Session> afterDispose = session -> {};

        private final AtomicInteger serials = new AtomicInteger();
        private volatile RefPool<String, Session> pool;

        @Override
        public Session create(String key) {
            return apply(key);
        }

        @Override
        public Session apply(String key) {
            factoryCalls.incrementAndGet();
            for (Session earlier : created) { // a key's next object only after its predecessor's disposer returned
                if (earlier.key.equals(key) && !earlier.disposerReturned && !replacedAtOnce.test(earlier)) {
                    violations.add(key + " created while the disposer of " + earlier + " had not returned");
                }
            }
            beforeCreate.accept(key);
            Session session = new Session(key, serials.incrementAndGet());
            afterCreate.accept(session);
            created.add(session);
            return session;
        }

        @Override
        public void accept(Session session) {
            RefPool<String, Session> p = pool;
            if (p != null && !p.isAttached()) {
                violations.add(session + " disposed on thread '"
                        + Thread.currentThread().getName() + "', which is not attached");
            }
            int times = session.disposals.incrementAndGet();
            if (times != 1) {
                violations.add(session + " disposed " + times + " times");
            }
            int open = session.openHandles.get();
            if (open != 0) {
                violations.add(session + " disposed while the test held " + open + " handle(s) to it");
            }
            disposed.add(session);
            try {
                afterDispose.accept(session);
            } finally {
                session.disposerReturned = true;
            }
        }

        /** {@return a builder whose factory, disposer and error listener are this engine's} */
        RefPool.Builder<String, Session> builder() {
            return RefPool.<String, Session>builder(this).disposer(this::accept).errorListener(errors::add);
        }

        /** Builds the pool and remembers it for the attached check. */
        RefPool<String, Session> build(RefPool.Builder<String, Session> builder) {
            RefPool<String, Session> built = builder.build();
            pool = built;
            return built;
        }

        List<PoolError> errors(PoolError.Kind kind) {
            List<PoolError> matching = new ArrayList<>();
            for (PoolError error : errors) {
                if (error.kind() == kind) {
                    matching.add(error);
                }
            }
            return matching;
        }

        void assertNoViolations() {
            if (!violations.isEmpty()) {
                fail("disposal violations: " + violations);
            }
        }

        /** Every session created was disposed exactly once, attached, with no handle open. */
        void assertAllDisposedExactlyOnce() {
            assertNoViolations();
            for (Session session : created) {
                assertEquals(1, session.disposals.get(), session + " disposals");
            }
        }

        /** Waits (bounded) until every session created was disposed, then checks each once. */
        void awaitAllDisposedExactlyOnce() {
            eventually().until(() -> created.stream().allMatch(Session::isDisposed));
            assertAllDisposedExactlyOnce();
        }
    }

    /** A Caffeine ticker the test moves by hand. */
    static final class ManualTicker implements Ticker {
        private final AtomicLong nanos = new AtomicLong();

        @Override
        public long read() {
            return nanos.get();
        }

        void advance(Duration by) {
            nanos.addAndGet(by.toNanos());
        }
    }

    /**
     * Release-queue hooks that stop one thread the {@code nth} time it reaches {@code point}, until
     * the test calls {@link #proceed()}.
     */
    static final class PauseAt implements ReleaseQueueHooks {
        private final Point point;
        private final int nth;
        private final AtomicInteger seen = new AtomicInteger();
        private final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch proceed = new CountDownLatch(1);
        private volatile Thread thread;

        PauseAt(Point point, int nth) {
            this.point = point;
            this.nth = nth;
        }

        /** Only {@code t} is counted and paused. */
        PauseAt on(Thread t) {
            thread = t;
            return this;
        }

        @Override
        public void at(Point p) {
            if (p != point || Thread.currentThread() != thread) {
                return;
            }
            if (seen.incrementAndGet() != nth) {
                return;
            }
            arrived.countDown();
            try {
                if (!proceed.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                    throw new AssertionError("paused at " + point + " and never let go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void awaitArrival() throws InterruptedException {
            if (!arrived.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("the thread never reached " + point + " #" + nth);
            }
        }

        void proceed() {
            proceed.countDown();
        }
    }

    /** Runs {@code body} on a new thread that is not attached, and waits (bounded) for it. */
    static <T> T onOtherThread(TestKit.Body<T> body) throws Exception {
        return TestKit.fork("test-helper", body).join();
    }

    /** {@return a thread attached to {@code pool} until {@code letGo} opens}; it is attached on return */
    static TestKit.Forked<Void> attachedUntil(RefPool<?, ?> pool, CountDownLatch letGo) {
        CountDownLatch holding = new CountDownLatch(1);
        TestKit.Forked<Void> holder = TestKit.forkRun("holder", () -> {
            try (Attachment attached = pool.attach()) {
                holding.countDown();
                awaitLatch(letGo);
            }
        });
        awaitLatch(holding);
        return holder;
    }

    /** Waits (bounded) for {@code latch}; for use inside factories and disposers. */
    static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("a latch was never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a latch", e);
        }
    }

    /** Throws {@code t} even if it is checked, as code in other JVM languages can. */
    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneakyThrow(Throwable t) throws E {
        throw (E) t;
    }
}
