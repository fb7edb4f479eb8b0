package io.refpool.bench.baseline;

import java.util.function.Function;
import org.apache.commons.pool2.BaseKeyedPooledObjectFactory;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.impl.DefaultPooledObject;

/**
 * The commons-pool2 keyed factory the benchmarks give {@code GenericKeyedObjectPool}: it creates a
 * key's object with a function and wraps it in commons-pool2's default bookkeeping.
 *
 * <pre>{@code
 * var pool = new GenericKeyedObjectPool<>(new CommonsFactory<String, Engine>(Engine::new), config);
 * }</pre>
 *
 * @param <K> key type
 * @param <V> object type
 */
public final class CommonsFactory<K, V> extends BaseKeyedPooledObjectFactory<K, V> {
    private final Function<? super K, ? extends V> create;

    /**
     * Creates the factory.
     *
     * @param create makes a key's object
     */
    public CommonsFactory(Function<? super K, ? extends V> create) {
        this.create = create;
    }

    @Override
    public V create(K key) {
        return create.apply(key);
    }

    @Override
    public PooledObject<V> wrap(V value) {
        return new DefaultPooledObject<>(value);
    }
}
