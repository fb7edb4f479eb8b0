package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import io.refpool.sync.CancellationToken;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Seeded random runs checked against a reference model.
 *
 * <p>{@link #sequentialRunsMatchTheReferenceModelStepByStep} drives one thread through random
 * attaches (shared or exclusive, nested), detaches, acquires, async acquires (which may wait for
 * capacity), shares, closes on and off attachment, {@code Handle.invalidate()}, and a pool close;
 * in some runs also a validator that refuses objects the run marked bad, and a maximum lifetime on
 * a fake ticker the run moves by whole lifetimes. After every step it compares every counter of
 * {@link PoolStats} (with the disposals for the causes those steps add) and every handle's object
 * with a small model of counts, idle objects, retired objects still held, object ages, pending
 * decrements and a FIFO line of capacity waiters. The model learns only what the pool may choose
 * freely: which idle object a capacity eviction picks.
 *
 * <p>{@link #concurrentRunsKeepTheInvariants} runs {@link TestKeyedConcurrentRun}s: several threads
 * doing the same operations plus handing handles to each other, timed-out async acquires, expiry on
 * a manual ticker and a pool close in the middle of some runs, checked against what the model can
 * say without knowing the interleaving, and against DESIGN.md's invariants once they are done.
 *
 * <p>A run prints nothing unless it fails; then the message names its seed, which
 * {@code -Drefpool.model.seed=<seed>} replays.
 */
class PoolModelPropertyTest {
    static final String SEED_PROPERTY = "refpool.model.seed";
    private static final int SEQUENTIAL_RUNS = 300;
    private static final int SEQUENTIAL_STEPS = 150;
    private static final int CONCURRENT_RUNS = 40;
    private static final int CONCURRENT_THREADS = 3;
    private static final int CONCURRENT_STEPS = 300;
    private static final String[] KEYS = {"k0", "k1", "k2", "k3"};
    /** The maximum lifetime of the runs with revive checks; the clock moves by whole lifetimes. */
    private static final long LIFETIME_NANOS = 1_000_000_000L;
    /** The disposal causes the model counts one by one. */
    private static final List<DisposalCause> COUNTED_CAUSES =
            List.of(DisposalCause.RETIRED, DisposalCause.FAILED_VALIDATION, DisposalCause.LIFETIME);

    private static ExecutorService offAttachment;

    @BeforeAll
    static void startHelper() {
        offAttachment = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "model-off-attachment");
            thread.setDaemon(true);
            return thread;
        });
    }

    @AfterAll
    static void stopHelper() {
        offAttachment.shutdownNow();
    }

    /** The seeds to run: the replayed one, or {@code runs} seeds drawn from a fresh master seed. */
    static long[] seeds(int runs) {
        String replay = System.getProperty(SEED_PROPERTY);
        if (replay != null) {
            return new long[] {Long.parseLong(replay)};
        }
        Random master = new Random();
        long[] seeds = new long[runs];
        for (int i = 0; i < runs; i++) {
            seeds[i] = master.nextLong();
        }
        return seeds;
    }

    static AssertionError failedRun(String what, long seed, List<String> trace, Throwable failure) {
        int from = Math.max(0, trace.size() - 60);
        return new AssertionError(
                what + " failed with seed " + seed + " (replay: -D" + SEED_PROPERTY + "=" + seed + ")\n last steps:\n  "
                        + String.join("\n  ", trace.subList(from, trace.size())),
                failure);
    }

    @Test
    void sequentialRunsMatchTheReferenceModelStepByStep() throws Exception {
        for (long seed : seeds(SEQUENTIAL_RUNS)) {
            SequentialRun run = new SequentialRun(seed);
            try {
                run.run();
            } catch (Throwable failure) {
                throw failedRun("sequential model run", seed, run.trace, failure);
            } finally {
                run.pool.close();
            }
        }
    }

    @Test
    void concurrentRunsKeepTheInvariants() throws Exception {
        for (long seed : seeds(CONCURRENT_RUNS)) {
            TestKeyedConcurrentRun run = new TestKeyedConcurrentRun(seed, CONCURRENT_THREADS, CONCURRENT_STEPS);
            try {
                run.run();
            } catch (Throwable failure) {
                throw failedRun("concurrent run", seed, run.trace, failure);
            }
        }
    }

    /** An object as the model sees it. */
    private static final class ModelObject {
        final String key;
        Session session; // null until learned (an object a waiter created mid-step)
        int refs; // open handles plus pending decrements: the pool's count
        boolean idle;
        final long bornAt; // the ticker when it was created
        boolean retired; // Handle.invalidate(): out of its key's slot, disposed at count 0
        boolean bad; // the validator refuses it
        DisposalCause fate; // why it is disposed, once decided

        ModelObject(String key, Session session, long bornAt) {
            this.key = key;
            this.session = session;
            this.bornAt = bornAt;
        }

        @Override
        public String toString() {
            return key + "(refs " + refs + (idle ? ", idle" : "") + (retired ? ", retired" : "") + (bad ? ", bad" : "")
                    + ")";
        }
    }

    /** A handle the test holds, with the object the model says it refers to. */
    private static final class Held {
        final Handle<Session> handle;
        final ModelObject object;

        Held(Handle<Session> handle, ModelObject object) {
            this.handle = handle;
            this.object = object;
        }
    }

    /** An {@code acquireAsync} that went to the capacity line. */
    private static final class Waiter {
        final String key;
        final CompletableFuture<Handle<Session>> future;
        ModelObject served; // set when the model serves it
        boolean createdForIt;

        Waiter(String key, CompletableFuture<Handle<Session>> future) {
            this.key = key;
            this.future = future;
        }
    }

    /** One seeded single-threaded run and its model. */
    private static final class SequentialRun {
        final long seed;
        final Random random;
        final AttachMode mode;
        final boolean idleCache;
        final int maxObjects; // 0: unbounded
        final boolean checks; // a validator and a maximum lifetime
        final java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
        final java.util.Set<Session> refused = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final java.util.concurrent.atomic.AtomicLong validatorCalls = new java.util.concurrent.atomic.AtomicLong();
        final java.util.Set<Session> everRetired = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final Engine engine = new Engine();
        final RefPool<String, Session> pool;
        final List<String> trace = new ArrayList<>();

        // the model
        final Map<String, ModelObject> objects = new HashMap<>(); // not disposed, by key
        final List<ModelObject> retired = new ArrayList<>(); // retired, held, not disposed yet
        final Map<DisposalCause, Long> disposedFor = new java.util.EnumMap<>(DisposalCause.class);
        long validations;
        final List<Held> held = new ArrayList<>();
        final List<ModelObject> pendingReleases = new ArrayList<>();
        final ArrayDeque<Waiter> inLine = new ArrayDeque<>();
        final ArrayDeque<Waiter> granted = new ArrayDeque<>(); // permit granted, waiting for the gate
        final List<Waiter> served = new ArrayList<>(); // served this step, checked after it
        final List<Waiter> allWaiters = new ArrayList<>();
        final Deque<Attachment> scopes = new ArrayDeque<>();
        boolean holdingGate; // attached, in an acquireAsync's attempt, or in the outermost detach's drain
        boolean holdingExclusively;
        boolean closed;
        long creations;
        long disposals;
        long idleHits;
        long drains;
        long capacityEvictions;
        final List<Session> expectedDisposals = new ArrayList<>();
        int seenDisposals;

        SequentialRun(long seed) {
            this.seed = seed;
            this.random = new Random(seed);
            this.mode = random.nextBoolean() ? AttachMode.GLOBAL : AttachMode.SHARED;
            this.idleCache = random.nextInt(3) != 0;
            this.maxObjects = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(3);
            this.checks = random.nextBoolean();
            engine.replacedAtOnce = everRetired::contains; // a retired object's key gets its next one at once
            RefPool.Builder<String, Session> builder = engine.builder()
                    .attachMode(mode)
                    .drainDelay(java.time.Duration.ofHours(1)) // only attaches drain, as the model says
                    .drainThreshold(Integer.MAX_VALUE);
            if (idleCache) {
                builder.idle(cache -> {}); // unbounded: only capacity and close take objects out
            }
            if (maxObjects > 0) {
                builder.maxObjects(maxObjects);
            }
            if (checks) {
                if (idleCache) { // nothing is revived without one, and build() refuses a validator there
                    builder = builder.<String, Session>validator((key, session) -> {
                        validatorCalls.incrementAndGet();
                        return !refused.contains(session);
                    });
                }
                builder.maxLifetime(java.time.Duration.ofNanos(LIFETIME_NANOS)).ticker(now::get);
            }
            pool = engine.build(builder);
            COUNTED_CAUSES.forEach(cause -> disposedFor.put(cause, 0L));
            trace.add("pool: " + mode + ", idle cache " + idleCache + ", maxObjects " + maxObjects + ", checks "
                    + checks);
        }

        void run() throws Exception {
            for (int step = 0; step < SEQUENTIAL_STEPS && !closed; step++) {
                step();
                afterStep();
            }
            finish();
        }

        private String randomKey() {
            return KEYS[random.nextInt(KEYS.length)];
        }

        private void step() throws Exception {
            int depth = scopes.size();
            int choice = random.nextInt(checks ? 110 : 104);
            if (choice < 12 && depth < 3) {
                attach();
            } else if (choice < 24 && depth > 0) {
                detach();
            } else if (choice < 50 && depth > 0) {
                acquire(randomKey());
            } else if (choice < 58 && depth == 0) {
                acquireAsync(randomKey());
            } else if (choice < 65 && !held.isEmpty()) {
                share(held.get(random.nextInt(held.size())));
            } else if (choice < 82 && !held.isEmpty()) {
                closeOnThisThread(held.remove(random.nextInt(held.size())));
            } else if (choice < 99 && !held.isEmpty()) {
                closeOffAttachment(held.remove(random.nextInt(held.size())));
            } else if (choice == 99) {
                closePool();
            } else if (choice < 104 && !held.isEmpty()) {
                invalidate(held.get(random.nextInt(held.size())));
            } else if (choice < 107 && checks) {
                markBad();
            } else if (choice >= 107) {
                now.addAndGet(LIFETIME_NANOS); // every object alive now outlives its limit
                trace.add("clock + lifetime");
            }
        }

        /** {@code Handle.invalidate()}: attaches, nested or not (draining); the object leaves its key. */
        private void invalidate(Held target) {
            trace.add("invalidate(" + target.object + ")");
            boolean outermost = scopes.isEmpty();
            if (outermost) {
                holdingGate = true;
                holdingExclusively = mode == AttachMode.GLOBAL;
            }
            drain();
            assertEquals(!target.object.retired, target.handle.invalidate(), "retired by this call");
            if (!target.object.retired) {
                target.object.retired = true;
                everRetired.add(target.object.session);
                objects.remove(target.object.key, target.object);
                retired.add(target.object);
            }
            if (outermost) {
                holdingGate = false;
                runGrantedWaiters();
            }
        }

        /** The validator refuses a known object from now on: checked at its next revive. */
        private void markBad() {
            List<ModelObject> known = new ArrayList<>();
            for (ModelObject object : objects.values()) {
                if (object.session != null && !object.bad) {
                    known.add(object);
                }
            }
            if (known.isEmpty()) {
                return;
            }
            ModelObject target = known.get(random.nextInt(known.size()));
            trace.add("bad(" + target + ")");
            target.bad = true;
            refused.add(target.session);
        }

        private boolean expired(ModelObject object) {
            return checks && now.get() - object.bornAt >= LIFETIME_NANOS;
        }

        /**
         * An acquire revives idle {@code object} through its checks. {@return it}, or {@code null}
         * if a check failed and disposed it: the acquire creates the key's next object
         */
        private ModelObject revive(ModelObject object) {
            DisposalCause failed = null;
            if (checks) {
                if (expired(object)) {
                    failed = DisposalCause.LIFETIME;
                } else {
                    validations++;
                    failed = object.bad ? DisposalCause.FAILED_VALIDATION : null;
                }
            }
            object.idle = false;
            if (failed == null) {
                idleHits++;
                return object;
            }
            object.fate = failed;
            dispose(object);
            return null;
        }

        /** A creation of {@code key}'s object, its session learned now or later ({@code null}). */
        private ModelObject create(String key, Session session) {
            creations++;
            ModelObject created = new ModelObject(key, session, now.get());
            created.refs = 1;
            objects.put(key, created);
            return created;
        }

        // ------------------------------------------------------------ operations

        private void attach() {
            boolean exclusive = scopes.isEmpty() && mode == AttachMode.SHARED && random.nextInt(4) == 0;
            trace.add(exclusive ? "exclusive()" : "attach() at depth " + scopes.size());
            scopes.push(exclusive ? pool.stopTheWorld() : pool.attach());
            if (scopes.size() == 1) {
                holdingGate = true;
                holdingExclusively = exclusive || mode == AttachMode.GLOBAL;
            }
            drain(); // every attach, nested or not, applies pending releases
        }

        private void detach() {
            trace.add("detach at depth " + scopes.size());
            scopes.pop().close();
            if (scopes.isEmpty()) {
                drain(); // the outermost detach applies pending releases, then gives the gate up
                holdingGate = false;
                runGrantedWaiters();
            }
        }

        private void acquire(String key) {
            trace.add("acquire(" + key + ")");
            ModelObject object = objects.get(key);
            boolean evicts = false;
            if (object == null && atCapacity() && !anyIdle()) {
                // short of capacity, an attached acquire applies the releases still pending (they
                // may free permits, which go to the line first) and looks again before it refuses
                drain();
                object = objects.get(key); // a waiter granted by that drain may have created the key
            }
            if (object == null && atCapacity()) {
                if (!anyIdle()) {
                    assertThrows(CapacityExhaustedException.class, () -> pool.acquire(key));
                    return;
                }
                evicts = true;
            }
            Handle<Session> handle = pool.acquire(key);
            if (evicts) {
                evictedOneIdleForCapacity();
            }
            Session session = handle.get();
            boolean created = object == null || object.session != session;
            ModelObject opened = open(key, object, session);
            held.add(new Held(handle, opened));
            if (mode == AttachMode.GLOBAL && created) {
                // the factory ran with the gate given up: waiters granted a permit ran meanwhile; one
                // for this key found the creation, waited for it, and shares the new object when it
                // is published, its permit not needed: that goes to the line
                List<Waiter> forThisKey = new ArrayList<>();
                granted.removeIf(waiter -> waiter.key.equals(key) && forThisKey.add(waiter));
                if (!forThisKey.isEmpty()) {
                    drain(); // its attach applied what was pending
                }
                holdingGate = false;
                runGrantedWaiters();
                holdingGate = true;
                for (Waiter waiter : forThisKey) {
                    opened.refs++;
                    waiter.served = opened;
                    served.add(waiter);
                    permitFreed();
                }
            }
        }

        private void acquireAsync(String key) {
            trace.add("acquireAsync(" + key + ")");
            ModelObject object = objects.get(key);
            CompletableFuture<Handle<Session>> future =
                    pool.acquireAsync(key, CancellationToken.none()).toCompletableFuture();
            if (object != null && !(checks && object.idle)) { // shared or revived at once, without attaching
                assertTrue(future.isDone(), "an acquireAsync of a live or idle key completes at once");
                Handle<Session> handle = future.join();
                held.add(new Held(handle, open(key, object, handle.get())));
                return;
            }
            // one attached attempt: it drains, then creates or goes to the line
            holdingGate = true;
            holdingExclusively = mode == AttachMode.GLOBAL;
            drain();
            Waiter waiter = new Waiter(key, future);
            allWaiters.add(waiter);
            ModelObject current = objects.get(key); // a waiter the drain served may have created it
            if (current != null && current.idle) {
                current = revive(current); // with checks, the idle object's revive attaches
                if (current == null) { // its check failed: its permit makes the new one
                    ModelObject created = create(key, null);
                    waiter.served = created;
                    waiter.createdForIt = true;
                    served.add(waiter);
                    serveLine(created);
                    holdingGate = false;
                    runGrantedWaiters();
                    return;
                }
            }
            if (current != null) {
                current.refs++;
                waiter.served = current;
                served.add(waiter);
                holdingGate = false;
                runGrantedWaiters();
                return;
            }
            if (atCapacity() && anyIdle()) {
                evictedOneIdleForCapacity();
            }
            if (atCapacity()) {
                inLine.add(waiter);
            } else {
                ModelObject created = create(key, null);
                waiter.served = created;
                waiter.createdForIt = true;
                served.add(waiter);
                serveLine(created);
            }
            holdingGate = false;
            runGrantedWaiters();
        }

        private void share(Held source) {
            trace.add("share(" + source.object + ")");
            Handle<Session> copy = source.handle.share();
            assertSame(source.handle.get(), copy.get());
            source.object.refs++;
            held.add(new Held(copy, source.object));
        }

        private void closeOnThisThread(Held target) {
            boolean attached = !scopes.isEmpty();
            trace.add("close(" + target.object + ")" + (attached ? " attached" : " detached"));
            target.handle.close();
            if (attached) {
                release(target.object);
            } else {
                pendingReleases.add(target.object);
            }
        }

        private void closeOffAttachment(Held target) throws Exception {
            trace.add("close(" + target.object + ") on another thread");
            offAttachment.submit(target.handle::close).get(BOUND.toSeconds(), TimeUnit.SECONDS);
            pendingReleases.add(target.object);
        }

        private void closePool() {
            trace.add("pool.close() at depth " + scopes.size());
            pool.close();
            closed = true;
            List<Waiter> failed = new ArrayList<>(inLine);
            failed.addAll(granted);
            inLine.clear();
            granted.clear();
            for (Waiter waiter : failed) {
                assertTrue(waiter.future.isCompletedExceptionally(), "a waiter failed by close");
                Throwable cause =
                        assertThrows(Exception.class, waiter.future::join).getCause();
                assertInstanceOf(PoolClosedException.class, cause);
            }
            drain();
            for (ModelObject object : new ArrayList<>(objects.values())) {
                if (object.idle) {
                    dispose(object);
                }
            }
            // counted over every object not disposed: a retired one still held included
            boolean open = objects.values().stream().anyMatch(o -> o.refs > 0) || !retired.isEmpty();
            assertEquals(
                    open ? 1 : 0,
                    engine.errors(PoolError.Kind.HANDLES_OPEN_AT_CLOSE).size());
        }

        // ------------------------------------------------------------ model transitions

        /** Opens a handle on {@code key}: shares or revives {@code object}, or records a creation. */
        private ModelObject open(String key, ModelObject object, Session session) {
            if (object != null && object.idle && revive(object) == null) {
                object = null; // its check failed and disposed it: this acquire created the next one
            }
            if (object == null) {
                // a new object of the key; in GLOBAL mode a waiter granted the gate while this factory
                // ran (on a thread of its own) may have created another one after it
                assertEquals(key, session.key);
                assertTrue(engine.created.contains(session), "a new object");
                assertTrue(
                        objects.values().stream().noneMatch(o -> o.session == session)
                                && retired.stream().noneMatch(o -> o.session == session),
                        "a new object, not one the model holds already");
                ModelObject created = create(key, session);
                serveLine(created); // the key's waiters in line share the new object
                return created;
            }
            if (object.session == null) {
                object.session = session; // created for a waiter this step served: first seen here
            }
            assertSame(object.session, session, "the key's one object");
            object.refs++;
            return object;
        }

        private boolean atCapacity() {
            return maxObjects > 0 && objects.size() + retired.size() + granted.size() >= maxObjects;
        }

        private boolean anyIdle() {
            return objects.values().stream().anyMatch(o -> o.idle);
        }

        /** The pool picked an idle object to dispose for capacity; the model learns which. */
        private void evictedOneIdleForCapacity() {
            assertTrue(inLine.isEmpty(), "nothing idles while someone waits in line");
            for (Session candidate : engine.disposed.subList(seenDisposals, engine.disposed.size())) {
                ModelObject object = objects.get(candidate.key);
                if (object != null && object.session == candidate && !expectedDisposals.contains(candidate)) {
                    assertTrue(object.idle, "a capacity eviction took " + object + ", which is not idle");
                    objects.remove(object.key);
                    object.idle = false;
                    disposals++;
                    capacityEvictions++;
                    expectedDisposals.add(candidate); // its permit went to the creation, not to the line
                    return;
                }
            }
            throw new AssertionError("the model expected a capacity eviction of an idle object");
        }

        /** Applies every pending release as one batch: decrements first, then disposals, in order. */
        private void drain() {
            if (pendingReleases.isEmpty()) {
                return;
            }
            drains++;
            List<ModelObject> toDispose = new ArrayList<>();
            for (ModelObject object : pendingReleases) {
                if (decrement(object)) {
                    toDispose.add(object);
                }
            }
            pendingReleases.clear();
            toDispose.forEach(this::dispose);
        }

        private void release(ModelObject object) {
            if (decrement(object)) {
                dispose(object);
            }
        }

        /** {@return whether the object reached zero and must be disposed rather than idled} */
        private boolean decrement(ModelObject object) {
            assertTrue(object.refs > 0, "a release of " + object + " that nobody held");
            if (--object.refs > 0) {
                return false;
            }
            if (object.retired) {
                retired.remove(object);
                object.fate = DisposalCause.RETIRED;
                return true;
            }
            if (!closed && expired(object)) {
                object.fate = DisposalCause.LIFETIME; // never to the cache nor to a waiter
                objects.remove(object.key, object);
                return true;
            }
            if (!closed && serveLine(object)) {
                return false; // a waiter for its own key took it
            }
            if (idleCache && !closed && inLine.isEmpty()) {
                object.idle = true;
                return false;
            }
            objects.remove(object.key, object); // claimed: from now on its key gets a new object
            return true;
        }

        private void dispose(ModelObject object) {
            objects.remove(object.key, object);
            object.idle = false;
            disposals++;
            if (object.fate != null) {
                disposedFor.merge(object.fate, 1L, Long::sum);
            }
            expectedDisposals.add(object.session);
            permitFreed();
        }

        /** A disposed object's permit goes to the head of the line, if anyone waits. */
        private void permitFreed() {
            if (maxObjects == 0 || closed || inLine.isEmpty()) {
                return;
            }
            granted.add(inLine.poll());
            if (gateFree()) {
                runGrantedWaiters();
            }
        }

        /** Whether a granted waiter's attachAsync gets the gate at once, on this thread. */
        private boolean gateFree() {
            return !holdingGate || (mode == AttachMode.SHARED && !holdingExclusively);
        }

        /** A granted waiter attaches (draining first), then shares, revives or creates its key. */
        private void runGrantedWaiters() {
            while (!granted.isEmpty() && gateFree()) {
                Waiter waiter = granted.poll();
                drain();
                ModelObject object = objects.get(waiter.key);
                if (object != null && object.idle) {
                    object = revive(object); // null: its check failed; the waiter's permit makes the next
                }
                if (object != null) {
                    object.refs++;
                    waiter.served = object;
                    served.add(waiter);
                    permitFreed(); // its permit was not needed
                } else {
                    ModelObject created = create(waiter.key, null);
                    waiter.served = created;
                    waiter.createdForIt = true;
                    served.add(waiter);
                    serveLine(created);
                }
            }
        }

        /**
         * Waiters in line for {@code object}'s key share it (the first revives it if it is at 0),
         * leaving the line without a permit. {@return whether any did}
         */
        private boolean serveLine(ModelObject object) {
            boolean any = false;
            for (Iterator<Waiter> it = inLine.iterator(); it.hasNext(); ) {
                Waiter waiter = it.next();
                if (waiter.key.equals(object.key)) {
                    it.remove();
                    if (object.refs == 0) {
                        object.idle = false;
                        idleHits++; // revived for the line, not disposed and created again
                    }
                    object.refs++;
                    waiter.served = object;
                    served.add(waiter);
                    any = true;
                }
            }
            return any;
        }

        // ------------------------------------------------------------ checks

        /**
         * {@return the handle the model served {@code waiter}}: done at once, unless in {@code GLOBAL}
         * mode a thread inside its factory granted the waiter the gate, which then runs its attempt on
         * a thread of its own and completes its stage there, just after it gives the gate back
         */
        private Handle<Session> served(Waiter waiter) {
            String what = "the model served acquireAsync(" + waiter.key + ")";
            if (mode != AttachMode.GLOBAL) {
                assertTrue(waiter.future.isDone(), what);
            }
            try {
                return waiter.future.get(BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(what, e);
            }
        }

        private void afterStep() {
            for (Waiter waiter : served) {
                Handle<Session> handle = served(waiter);
                if (waiter.createdForIt) {
                    assertEquals(waiter.key, handle.get().key);
                    waiter.served.session = handle.get();
                } else {
                    assertSame(waiter.served.session, handle.get());
                }
                held.add(new Held(handle, waiter.served));
            }
            served.clear();
            for (Waiter waiter : inLine) {
                assertFalse(waiter.future.isDone(), "acquireAsync(" + waiter.key + ") is still in line");
            }
            identifyDisposals();
            engine.assertNoViolations();
            for (Held h : held) {
                assertFalse(h.handle.get().isDisposed(), "an object with an open handle is live");
            }
            PoolStats stats = pool.stats();
            long live = objects.values().stream().filter(o -> o.refs > 0).count() + retired.size();
            long idle = objects.values().stream().filter(o -> o.idle).count();
            assertEquals(
                    List.of(live, idle, (long) pendingReleases.size(), drains, creations, disposals, idleHits),
                    List.of(
                            stats.live(),
                            stats.idle(),
                            stats.pendingDecrements(),
                            stats.drains(),
                            stats.creations(),
                            stats.disposals(),
                            stats.idleHits()),
                    "live, idle, pending, drains, creations, disposals, idle hits: " + stats);
            assertEquals(
                    List.of(stats.live(), stats.idle()),
                    List.of(
                            pool.core().readings().liveNow(),
                            pool.core().readings().idleNow()),
                    "the meters' event counters agree with the scan of stats()");
            assertEquals(inLine.size(), stats.capacityWaiters());
            assertEquals(capacityEvictions, stats.evictions(EvictionCause.CAPACITY));
            assertEquals(capacityEvictions, stats.evictions());
            assertEquals(creations, engine.factoryCalls.get());
            for (DisposalCause cause : COUNTED_CAUSES) {
                assertEquals(disposedFor.get(cause), stats.disposals(cause), "disposals for " + cause);
            }
            assertEquals(
                    validations, validatorCalls.get(), "the validator runs once per revive, never on a live object");
            awaitGrantedAtTheGate();
        }

        /**
         * In {@code GLOBAL} mode, while this thread holds the gate, lets every waiter granted a
         * permit reach the gate's line before the next step. A waiter's attempt that ran on a thread
         * of its own (granted while this thread's factory had the gate given up) queues again from
         * that thread, which may be descheduled between leaving the gate and queueing: the next step
         * (a factory that gives the gate up, or the pool's close, which fails the gate's line) must
         * find it in line, as the model says it is.
         */
        private void awaitGrantedAtTheGate() {
            if (mode != AttachMode.GLOBAL || scopes.isEmpty() || closed) {
                return;
            }
            int expected = granted.size();
            eventually()
                    .alias("the " + expected + " waiters granted a permit are in the gate's line")
                    .until(() -> pool.core().gateQueueLength() == expected);
        }

        /** Matches the step's disposals with the model's. */
        private void identifyDisposals() {
            List<Session> fresh = new ArrayList<>(engine.disposed.subList(seenDisposals, engine.disposed.size()));
            seenDisposals = engine.disposed.size();
            for (Session expected : expectedDisposals) {
                assertTrue(fresh.remove(expected), expected + " disposed, as the model says");
            }
            expectedDisposals.clear();
            assertEquals(List.of(), fresh, "disposals the model did not expect");
        }

        /** Closes everything, then the pool: every object is disposed exactly once, nothing pending. */
        private void finish() throws Exception {
            trace.add("finish");
            if (closed) {
                // releases after close are applied by the drainer, at its own time: no step checks
                for (Held target : held) {
                    target.handle.close();
                }
                held.clear();
                while (!scopes.isEmpty()) {
                    scopes.pop().close();
                }
                engine.awaitAllDisposedExactlyOnce();
                eventually().until(() -> pool.stats().pendingDecrements() == 0);
                assertEquals(0, pool.stats().live());
                return;
            }
            // detaching can serve waiters, whose handles are then closed too
            while (!held.isEmpty() || !scopes.isEmpty()) {
                if (held.isEmpty()) {
                    detach();
                } else {
                    Held target = held.remove(random.nextInt(held.size()));
                    if (random.nextBoolean()) {
                        closeOffAttachment(target);
                    } else {
                        closeOnThisThread(target);
                    }
                }
                afterStep();
            }
            closePool();
            afterStep();
            assertEquals(0, pool.stats().pendingDecrements(), "nothing is left pending once close returns");
            engine.assertAllDisposedExactlyOnce();
            assertTrue(objects.isEmpty() && retired.isEmpty(), "the model disposed everything too: " + objects);
            assertEquals(0, pool.stats().live());
            assertEquals(engine.created.size(), engine.disposed.size());
            for (Waiter waiter : allWaiters) {
                eventually().until(waiter.future::isDone);
            }
        }
    }
}
