package io.refpool.bench.baseline;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The keyed reference-counting pool a user would write by hand: a {@link ConcurrentHashMap} of
 * objects with an {@link AtomicInteger} count each, and an {@code AutoCloseable} lease.
 *
 * <pre>{@code
 * HandRolledRefPool<String, Session> pool = new HandRolledRefPool<>(engine::open, Session::close, false);
 * try (HandRolledRefPool.Lease<String, Session> session = pool.acquire("tenant-7")) {
 *     session.get().ping();
 * }
 * }</pre>
 *
 * <p>It is the floor refpool is measured against, and it has none of refpool's guarantees: a
 * release runs the disposer on whichever thread closes the last lease (no attachment, no deferred
 * queue), there is no single flight beyond {@code computeIfAbsent} (which runs the factory inside
 * the map's bin lock), no capacity, no idle policy (with {@code keepAtZero} an object at count zero
 * simply stays), no leak detection and no statistics.
 */
public final class HandRolledRefPool<K, V> {
    private static final int DEAD = -1;

    private final ConcurrentHashMap<K, Counted<V>> objects = new ConcurrentHashMap<>();
    private final Function<? super K, ? extends V> factory;
    private final Consumer<? super V> disposer;
    private final boolean keepAtZero;

    /**
     * Creates the pool.
     *
     * @param factory creates a key's object
     * @param disposer disposes an object whose count reached zero, unless {@code keepAtZero}
     * @param keepAtZero whether objects stay in the map at count zero (an idle cache with no bound)
     */
    public HandRolledRefPool(
            Function<? super K, ? extends V> factory, Consumer<? super V> disposer, boolean keepAtZero) {
        this.factory = factory;
        this.disposer = disposer;
        this.keepAtZero = keepAtZero;
    }

    /**
     * Opens a lease on the object of {@code key}, creating it if needed.
     *
     * @param key the key
     * @return the lease, to close once
     */
    public Lease<K, V> acquire(K key) {
        for (; ; ) {
            Counted<V> counted = objects.get(key);
            if (counted == null) {
                counted = objects.computeIfAbsent(key, k -> new Counted<>(factory.apply(k)));
            }
            if (counted.retain()) {
                return new Lease<>(this, key, counted);
            }
            objects.remove(key, counted); // disposed meanwhile
        }
    }

    private void release(K key, Counted<V> counted) {
        if (counted.count.decrementAndGet() == 0 && !keepAtZero && counted.count.compareAndSet(0, DEAD)) {
            objects.remove(key, counted);
            disposer.accept(counted.value);
        }
    }

    /** An object and its count; {@code DEAD} once disposed. */
    private static final class Counted<V> {
        final V value;
        final AtomicInteger count = new AtomicInteger();

        Counted(V value) {
            this.value = value;
        }

        boolean retain() {
            for (; ; ) {
                int c = count.get();
                if (c == DEAD) {
                    return false;
                }
                if (count.compareAndSet(c, c + 1)) {
                    return true;
                }
            }
        }
    }

    /**
     * One reference to a pooled object; not thread-safe, closed once by its owner.
     *
     * @param <K> key type
     * @param <V> object type
     */
    public static final class Lease<K, V> implements AutoCloseable {
        private final HandRolledRefPool<K, V> pool;
        private final K key;
        private final Counted<V> counted;
        private boolean closed;

        Lease(HandRolledRefPool<K, V> pool, K key, Counted<V> counted) {
            this.pool = pool;
            this.key = key;
            this.counted = counted;
        }

        /** {@return the pooled object} */
        public V get() {
            return counted.value;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                pool.release(key, counted);
            }
        }
    }
}
