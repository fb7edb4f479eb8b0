package io.refpool.bench.baseline;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The steady state of the thread-lease design (docs/notes/thread-leases.md) as a cost model: the
 * hand-rolled map of {@link HandRolledRefPool}, where each thread also keeps leases, each one
 * reference in an object's shared count, and counts its own uses of a leased object in a word of
 * its own.
 *
 * <pre>{@code
 * ThreadLeasedRefPool<String, Session> pool = new ThreadLeasedRefPool<>(engine::open);
 * try (ThreadLeasedRefPool.Use<Session> session = pool.acquire("tenant-7")) {
 *     session.get().ping();
 * }
 * }</pre>
 *
 * <p>A thread's leases are an open-addressed table of {@value #RECORDS} records, indexed by the
 * key's hash and probed linearly, so a thread leases every key it uses until the table is full.
 * An acquire of a key the thread leases is one compare-and-set on the thread's own record and its
 * close another; neither writes a line another thread's request writes. An acquire of any other
 * key retains the object in its shared count, as the hand-rolled map does, and the thread keeps
 * that reference as a lease in a free record or, with none left, in the key's home record, giving
 * back the reference of the lease there (unless a use is open on it: the new use then holds its
 * reference in a record of its own).
 *
 * <p>It models the cost of the design, not the design: objects are never disposed (as the
 * hand-rolled map with {@code keepAtZero}), nothing revokes a lease, and a use is closed on the
 * thread that opened it. The compare-and-sets are there because a revocation would race them.
 */
public final class ThreadLeasedRefPool<K, V> {
    /** Lease records per thread, a power of two. */
    public static final int RECORDS = 128;

    private final ConcurrentHashMap<K, Counted<V>> objects = new ConcurrentHashMap<>();
    private final Function<? super K, ? extends V> factory;
    private final ThreadLocal<Record<K, V>[]> leases;
    /** {@link #LEASE}; a field, not a constant, see {@link #leaseOutOfLine}. */
    private final MethodHandle leaseHandle = LEASE;

    private static final MethodHandle LEASE;

    static {
        try {
            LEASE = MethodHandles.lookup()
                    .findVirtual(
                            ThreadLeasedRefPool.class,
                            "lease",
                            MethodType.methodType(Record.class, Record[].class, int.class, Object.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Creates the pool.
     *
     * @param factory creates a key's object
     */
    @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type
    public ThreadLeasedRefPool(Function<? super K, ? extends V> factory) {
        this.factory = factory;
        this.leases = ThreadLocal.withInitial(() -> {
            Record[] records = new Record[RECORDS];
            for (int i = 0; i < RECORDS; i++) {
                records[i] = new Record<>(false);
            }
            return records;
        });
    }

    /**
     * Opens a use of the object of {@code key}, creating it if needed.
     *
     * @param key the key
     * @return the use, to close once on this thread
     */
    public Use<V> acquire(K key) {
        Record<K, V>[] records = leases.get();
        int h = key.hashCode();
        int home = (h ^ (h >>> 16)) & (RECORDS - 1);
        Record<K, V> leased = null;
        for (int probe = 0; probe < RECORDS; probe++) {
            Record<K, V> record = records[(home + probe) & (RECORDS - 1)];
            if (record.key == key && record.tryOpen()) {
                leased = record;
                break;
            }
            if (record.key == null) {
                break;
            }
        }
        return new Use<>(leased != null ? leased : leaseOutOfLine(records, home, key)); // one allocation
    }

    /**
     * {@link #lease}, called through a method handle held in a field, which the JIT calls rather
     * than inlines (as refpool's own acquire does), so {@code acquire} stays small enough to inline
     * into its caller and the {@link Use} is scalar-replaced.
     */
    @SuppressWarnings("unchecked")
    private Record<K, V> leaseOutOfLine(Record<K, V>[] records, int home, K key) {
        try {
            return (Record<K, V>) leaseHandle.invokeExact(this, records, home, (Object) key);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable checked) { // lease declares none
            throw new IllegalStateException(checked);
        }
    }

    /**
     * The acquire of a key the thread does not lease (or leases under another instance of an equal
     * key): the shared count, kept as a lease in the first free record of the key's probe sequence,
     * else in its home record.
     *
     * @return the record, with one use open: the thread's, or one of the use's own if a use is open
     *     on the record the lease would replace
     */
    @SuppressWarnings("unused") // called through LEASE
    private Record<K, V> lease(Record<K, V>[] records, int home, K key) {
        Record<K, V> free = null;
        for (int probe = 0; probe < RECORDS; probe++) {
            Record<K, V> record = records[(home + probe) & (RECORDS - 1)];
            if (record.key == null) {
                free = record;
                break;
            }
            if (record.key.equals(key) && record.tryOpen()) {
                return record;
            }
        }
        Counted<V> counted = objects.get(key);
        if (counted == null) {
            counted = objects.computeIfAbsent(key, k -> new Counted<>(factory.apply(k)));
        }
        counted.count.incrementAndGet(); // the reference: the lease's, or the use's own
        Record<K, V> record = free != null ? free : records[home];
        if (record.handles() != 0) {
            record = new Record<>(true);
        } else if (record.counted != null) {
            record.counted.count.decrementAndGet(); // the replaced lease's reference, given back
        }
        record.key = key;
        record.counted = counted;
        record.open();
        return record;
    }

    /** The shared count of {@code key}'s object: one per lease and per use that holds no lease. */
    public int count(K key) {
        Counted<V> counted = objects.get(key);
        return counted == null ? 0 : counted.count.get();
    }

    /** An object and its shared count. */
    private static final class Counted<V> {
        final V value;
        final AtomicInteger count = new AtomicInteger();

        Counted(V value) {
            this.value = value;
        }
    }

    /** One thread's lease: a key, its object, and the uses open on it; padded to a line of its own. */
    private static final class Record<K, V> {
        private static final VarHandle HANDLES;

        static {
            try {
                HANDLES = MethodHandles.lookup().findVarHandle(Record.class, "handles", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused")
        private long p0, p1, p2, p3, p4, p5, p6, p7;

        K key;
        Counted<V> counted;
        /**
         * Uses open under this lease, written by its thread with compare-and-set, as a revocation
         * would race them (moving 0 to a negative mark); read plain by its thread.
         */
        @SuppressWarnings("unused") // accessed through HANDLES
        private int handles;
        /** A record of one use's own, in no thread's table: its close gives the reference back. */
        final boolean own;

        @SuppressWarnings("unused")
        private long q0, q1, q2, q3, q4, q5, q6, q7;

        Record(boolean own) {
            this.own = own;
        }

        int handles() {
            return handles;
        }

        boolean tryOpen() {
            int n = handles;
            return n >= 0 && HANDLES.compareAndSet(this, n, n + 1);
        }

        /** The first use of a new lease. */
        void open() {
            HANDLES.setRelease(this, 1);
        }

        void close() {
            int n = handles;
            if (!HANDLES.compareAndSet(this, n, n - 1)) {
                throw new IllegalStateException("a lease record changed under its owner");
            }
            if (own) {
                counted.count.decrementAndGet();
            }
        }
    }

    /**
     * One use of a leased object; closed once, on the thread that opened it.
     *
     * @param <V> object type
     */
    public static final class Use<V> implements AutoCloseable {
        private final Record<?, V> record;
        private boolean closed;

        Use(Record<?, V> record) {
            this.record = record;
        }

        /** {@return the pooled object} */
        public V get() {
            return record.counted.value;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                record.close();
            }
        }
    }
}
