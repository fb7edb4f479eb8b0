package io.refpool.core;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Fault injection for {@link PoolFaultInjectionTest}: a plan that counts the calls of every user
 * callback and throws from exactly one of them, a key whose {@code hashCode}, {@code equals} and
 * {@code toString} consult the plan, and an engine (factory, disposer, weigher, error listener,
 * drainer executor) that does too.
 *
 * <p>A clean plan only counts; a faulting plan throws from call {@code n} of one callback, once. A
 * test counts the calls of a scenario with a clean plan, then replays the scenario once for each
 * {@code n}, so that every call site of every callback throws once.
 */
final class TestFaults {
    private TestFaults() {}

    /** The user callbacks a pool calls. */
    enum Callback {
        FACTORY,
        DISPOSER,
        KEY_HASH_CODE,
        KEY_EQUALS,
        KEY_TO_STRING,
        WEIGHER,
        LISTENER,
        EXECUTOR
    }

    /** What a faulting callback throws. */
    enum Kind {
        /** An unchecked exception. */
        RUNTIME,
        /** A checked exception, thrown sneakily as code in other JVM languages can. */
        CHECKED,
        /** An {@link Error}. */
        ERROR,
        /** An executor's refusal: {@link RejectedExecutionException}. */
        REJECTED,
        /** The error an executor throws when the JVM cannot start another thread. */
        NATIVE_THREAD_OOM;

        /** The kinds a callback other than the executor throws. */
        static final List<Kind> CALLBACK_KINDS = List.of(RUNTIME, CHECKED, ERROR);
        /** The kinds the drainer executor throws. */
        static final List<Kind> EXECUTOR_KINDS = List.of(REJECTED, RUNTIME, NATIVE_THREAD_OOM);

        Throwable make(String where) {
            switch (this) {
                case RUNTIME:
                    return new InjectedRuntimeException("injected: " + where);
                case CHECKED:
                    return new InjectedCheckedException("injected: " + where);
                case ERROR:
                    return new InjectedError("injected: " + where);
                case REJECTED:
                    return new RejectedExecutionException("injected: " + where);
                default:
                    return new OutOfMemoryError("unable to create native thread");
            }
        }
    }

    static final class InjectedRuntimeException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedRuntimeException(String message) {
            super(message);
        }
    }

    static final class InjectedCheckedException extends Exception {
        private static final long serialVersionUID = 1L;

        InjectedCheckedException(String message) {
            super(message);
        }
    }

    static final class InjectedError extends Error {
        private static final long serialVersionUID = 1L;

        InjectedError(String message) {
            super(message);
        }
    }

    /**
     * Counts callback calls and throws from call {@code n} of {@code target}. A quiet plan neither
     * counts nor throws: tests probe the pool quietly between the steps of a scenario.
     */
    static final class FaultPlan {
        private volatile Callback target;
        private volatile int n;
        private volatile Kind kind;
        private final Map<Callback, AtomicInteger> calls = new EnumMap<>(Callback.class);
        /** For a clean plan: the call site of each call, by callback, in call order. */
        private final Map<Callback, List<String>> sites = new EnumMap<>(Callback.class);

        private volatile boolean quiet;
        /** The one throwable thrown, once it was. */
        volatile Throwable injected;
        /** The thread that called the faulting callback. */
        volatile String injectedOn;

        private FaultPlan(Callback target, int n, Kind kind) {
            this.target = target;
            this.n = n;
            this.kind = kind;
            for (Callback callback : Callback.values()) {
                calls.put(callback, new AtomicInteger());
                sites.put(callback, new CopyOnWriteArrayList<>());
            }
        }

        /** {@return a plan that only counts} */
        static FaultPlan clean() {
            return new FaultPlan(null, 0, null);
        }

        /** {@return a plan that throws a {@code kind} from call {@code n} of {@code target}} */
        static FaultPlan failing(Callback target, int n, Kind kind) {
            return new FaultPlan(target, n, kind);
        }

        /**
         * Plans the fault now, for a call counted from the start of the plan: tests whose call count
         * depends on the garbage collector arm the fault once the calls before it are counted.
         */
        void arm(Callback target, int n, Kind kind) {
            this.kind = kind;
            this.n = n;
            this.target = target;
        }

        Callback target() {
            return target;
        }

        /** Counts a call of {@code callback}; throws if it is the planned one. */
        void call(Callback callback) {
            if (quiet) {
                return;
            }
            int call = calls.get(callback).incrementAndGet();
            if (target == null) {
                sites.get(callback).add(site(new Throwable(), SITE_DEPTH));
            }
            if (callback == target && call == n) {
                Throwable fault = kind.make(callback + " call #" + call);
                injected = fault;
                injectedOn = Thread.currentThread().getName();
                throw TestKeyedPoolFixtures.sneakyThrow(fault);
            }
        }

        int calls(Callback callback) {
            return calls.get(callback).get();
        }

        /**
         * {@return for a clean plan, the calls of {@code callback} (numbered from 1) that are the first
         * from their call site}: the pool and Caffeine frames the call came through, up to
         * {@value #SITE_DEPTH} deep, so one callback line reached from different paths counts once
         * per path
         */
        List<Integer> firstCallPerSite(Callback callback) {
            List<Integer> first = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            List<String> all = sites.get(callback);
            for (int i = 0; i < all.size(); i++) {
                if (!seen.contains(all.get(i))) {
                    seen.add(all.get(i));
                    first.add(i + 1);
                }
            }
            return first;
        }

        void quiet(boolean on) {
            quiet = on;
        }

        boolean fired() {
            return injected != null;
        }

        @Override
        public String toString() {
            return target == null ? "no fault" : kind + " from " + target + " call #" + n;
        }
    }

    /** A key whose identity methods consult a {@link FaultPlan}; tests read {@link #name}, never call them. */
    static final class FaultKey {
        final String name;
        private final FaultPlan plan;

        FaultKey(String name, FaultPlan plan) {
            this.name = name;
            this.plan = plan;
        }

        @Override
        public int hashCode() {
            plan.call(Callback.KEY_HASH_CODE);
            return name.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            plan.call(Callback.KEY_EQUALS);
            return other instanceof FaultKey && ((FaultKey) other).name.equals(name);
        }

        @Override
        public String toString() {
            plan.call(Callback.KEY_TO_STRING);
            return name;
        }
    }

    /** A pooled object; its audit counters are read by the tests. */
    static final class Res {
        final String key;
        final int serial;
        final AtomicInteger disposals = new AtomicInteger();
        /** Handles the test holds open on this object. */
        final AtomicInteger openHandles = new AtomicInteger();

        Res(String key, int serial) {
            this.key = key;
            this.serial = serial;
        }

        @Override
        public String toString() {
            return "Res[" + key + " #" + serial + "]";
        }
    }

    /**
     * The factory, disposer, weigher and error listener of a pool under a {@link FaultPlan}. The
     * disposer audits each disposal first (attached, once, with no handle the test holds open) and
     * then consults the plan, so a throwing disposer still counts its object as disposed.
     */
    static final class FaultEngine {
        final FaultPlan plan;
        final List<Res> created = new CopyOnWriteArrayList<>();
        final List<String> violations = new CopyOnWriteArrayList<>();
        final List<PoolError> errors = new CopyOnWriteArrayList<>();
        /** When set, the listener throws this after recording, on every call. */
        volatile Kind listenerAlwaysThrows;

        private final AtomicInteger serials = new AtomicInteger();
        volatile RefPool<FaultKey, Res> pool;

        FaultEngine(FaultPlan plan) {
            this.plan = plan;
        }

        Res create(FaultKey key) {
            plan.call(Callback.FACTORY);
            Res res = new Res(key.name, serials.incrementAndGet());
            created.add(res);
            return res;
        }

        void dispose(Res res) {
            RefPool<FaultKey, Res> p = pool;
            if (p != null && !p.isAttached()) {
                violations.add(
                        res + " disposed on thread '" + Thread.currentThread().getName() + "', which is not attached");
            }
            int times = res.disposals.incrementAndGet();
            if (times != 1) {
                violations.add(res + " disposed " + times + " times");
            }
            int open = res.openHandles.get();
            if (open != 0) {
                violations.add(res + " disposed while the test held " + open + " handle(s) to it");
            }
            plan.call(Callback.DISPOSER);
        }

        int weigh(Res res) {
            plan.call(Callback.WEIGHER);
            return 1;
        }

        void onError(PoolError error) {
            errors.add(error);
            plan.call(Callback.LISTENER);
            Kind always = listenerAlwaysThrows;
            if (always != null) {
                throw TestKeyedPoolFixtures.sneakyThrow(always.make("LISTENER, always"));
            }
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
    }

    /** A drainer executor that only queues its tasks (after consulting the plan); tests run them. */
    static final class QueuedExecutor implements Executor {
        private final FaultPlan plan;
        private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

        QueuedExecutor(FaultPlan plan) {
            this.plan = plan;
        }

        @Override
        public void execute(Runnable task) {
            plan.call(Callback.EXECUTOR);
            tasks.add(task);
        }

        /** {@return the queued tasks, removed from the queue} */
        List<Runnable> takeAll() {
            List<Runnable> taken = new ArrayList<>();
            Runnable task;
            while ((task = tasks.poll()) != null) {
                taken.add(task);
            }
            return taken;
        }
    }

    /** {@return whether {@code thrown}, its causes or their suppressed exceptions include {@code fault}} */
    static boolean involves(Throwable thrown, Throwable fault) {
        if (thrown == null || fault == null) {
            return false;
        }
        List<Throwable> seen = new ArrayList<>();
        List<Throwable> todo = new ArrayList<>();
        todo.add(thrown);
        while (!todo.isEmpty()) {
            Throwable t = todo.remove(todo.size() - 1);
            if (t == null || seen.stream().anyMatch(s -> s == t)) {
                continue;
            }
            if (t == fault) {
                return true;
            }
            seen.add(t);
            todo.add(t.getCause());
            for (Throwable suppressed : t.getSuppressed()) {
                todo.add(suppressed);
            }
        }
        return false;
    }

    /** {@return {@code t} without the {@link CompletionException}/{@link ExecutionException} wrappers of futures} */
    static Throwable unwrapFuture(Throwable t) {
        Throwable u = t;
        while ((u instanceof CompletionException || u instanceof ExecutionException) && u.getCause() != null) {
            u = u.getCause();
        }
        return u;
    }

    /** {@code io.refpool.core.ObjectCreationException}, once the pool has it; {@code null} before. */
    static final Class<?> OBJECT_CREATION_EXCEPTION = objectCreationException();

    private static Class<?> objectCreationException() {
        try {
            return Class.forName("io.refpool.core.ObjectCreationException");
        } catch (ClassNotFoundException notYet) {
            return null;
        }
    }

    /**
     * Checks what an acquirer saw of a factory failure: an unchecked exception or error as thrown; a
     * checked exception wrapped in {@code ObjectCreationException} with it as the cause (or, while
     * that class does not exist, some exception whose cause chain holds it).
     *
     * @return {@code null} if {@code seen} has the contract's shape, otherwise what is wrong
     */
    static String factoryFailureShapeProblem(Throwable seen, Throwable fault) {
        Throwable t = unwrapFuture(seen);
        if (fault instanceof RuntimeException || fault instanceof Error) {
            return t == fault
                    ? null
                    : "the acquirer got " + describe(t) + " instead of the factory's own " + describe(fault);
        }
        if (OBJECT_CREATION_EXCEPTION != null) {
            return OBJECT_CREATION_EXCEPTION.isInstance(t) && t.getCause() == fault
                    ? null
                    : "the acquirer got " + describe(t) + " instead of an ObjectCreationException caused by "
                            + describe(fault);
        }
        return involves(t, fault)
                ? null
                : "the acquirer got " + describe(t) + ", whose cause chain lacks the factory's " + describe(fault);
    }

    static String describe(Throwable t) {
        return t == null ? "nothing" : t.getClass().getName() + ": " + t.getMessage();
    }

    /** How many pool and Caffeine frames tell one call site from another. */
    static final int SITE_DEPTH = 8;

    /** {@return the pool frames (and Caffeine's) the fault was thrown through, innermost first} */
    static String site(Throwable fault) {
        return site(fault, 4);
    }

    private static String site(Throwable fault, int depth) {
        if (fault == null) {
            return "-";
        }
        StringBuilder site = new StringBuilder();
        int listed = 0;
        for (StackTraceElement frame : fault.getStackTrace()) {
            String cls = frame.getClassName();
            boolean pool = cls.startsWith("io.refpool.core.internal.")
                    || cls.startsWith("io.refpool.sync.")
                    || cls.equals("io.refpool.core.RefPool")
                    || cls.startsWith("com.github.benmanes.caffeine.");
            if (pool) {
                if (listed++ > 0) {
                    site.append(" < ");
                }
                site.append(cls.substring(cls.lastIndexOf('.') + 1))
                        .append('.')
                        .append(frame.getMethodName())
                        .append(':')
                        .append(frame.getLineNumber());
                if (listed == depth) {
                    break;
                }
            }
        }
        return listed == 0 ? "(outside the pool)" : site.toString();
    }
}
