package io.refpool.core.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Finds the {@link VarHandle} of a field, for a {@code static final} initializer.
 *
 * <pre>{@code
 * private static final VarHandle COUNT = FieldHandles.find(MethodHandles.lookup(), Entry.class, "count", int.class);
 * }</pre>
 */
final class FieldHandles {
    private FieldHandles() {}

    /**
     * {@return the handle of the field {@code name} of type {@code type} declared by {@code owner}}
     *
     * @throws ExceptionInInitializerError if there is no such field: the class cannot work without it
     */
    static VarHandle find(MethodHandles.Lookup lookup, Class<?> owner, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(owner, name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
