package io.refpool.core.internal;

import io.refpool.core.ObjectFactory;
import java.util.function.Supplier;

/**
 * One call of the factory, for {@link SlotTable}'s creation: as it is, or with the calling thread's
 * attachment suspended ({@link Attacher#suspended}) for a gate-free creation. A checked failure is
 * kept and thrown once the thread is attached again, where the creation handles it.
 */
final class FactoryCall<K, V> implements Supplier<Void> {
    private final ObjectFactory<? super K, ? extends V> factory;
    private final K key;
    private V made;
    private Exception failure;

    private FactoryCall(ObjectFactory<? super K, ? extends V> factory, K key) {
        this.factory = factory;
        this.key = key;
    }

    /** {@return the factory's object for {@code key}}, made with the gate given up if {@code gateFree} */
    static <K, V> V run(
            ObjectFactory<? super K, ? extends V> factory,
            K key,
            Attacher<?, ?> attacher,
            AttachState s,
            boolean gateFree)
            throws Exception {
        if (!gateFree) {
            return factory.create(key);
        }
        FactoryCall<K, V> call = new FactoryCall<>(factory, key);
        attacher.suspended(s, call);
        if (call.failure != null) {
            throw call.failure;
        }
        return call.made;
    }

    @Override
    public Void get() {
        try {
            made = factory.create(key);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception checked) {
            failure = checked;
        }
        return null;
    }
}
