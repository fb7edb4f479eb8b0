package io.refpool.core.internal;

import io.refpool.core.RefPool;

/**
 * Lets the internal package build a {@code RefPool} around a {@link PoolCore} made from a
 * {@link PoolConfig} the public builder cannot express (the benchmark module's baseline release
 * queues), without widening the public API. {@code RefPool} installs the factory when it loads.
 */
public final class CoreAccess {
    /** Builds the public face of a core. */
    public interface PoolFactory {
        /**
         * {@return the pool whose implementation is {@code core}}
         *
         * @param core the implementation
         * @param <K> key type
         * @param <V> value type
         */
        <K, V> RefPool<K, V> newPool(PoolCore<K, V> core);
    }

    private static volatile PoolFactory factory;

    private CoreAccess() {}

    /** Called once by {@code RefPool}'s static initializer. */
    public static void install(PoolFactory poolFactory) {
        factory = poolFactory;
    }

    /** {@return a pool built from {@code config}} */
    public static <K, V> RefPool<K, V> newPool(PoolConfig<K, V> config) {
        PoolFactory f = factory;
        if (f == null) {
            try {
                Class.forName(RefPool.class.getName(), true, RefPool.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            f = factory;
        }
        return f.newPool(new PoolCore<>(config));
    }
}
