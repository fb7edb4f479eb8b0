package io.refpool.sync.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Finds the {@link VarHandle} of a field of the looking-up class, for a {@code static final}
 * initializer.
 *
 * <pre>{@code
 * private static final VarHandle PHASE = VarHandles.field(MethodHandles.lookup(), "phase", int.class);
 * }</pre>
 */
public final class VarHandles {
    private VarHandles() {}

    /**
     * {@return the handle of the field {@code name} of type {@code type} declared by {@code lookup}'s class}
     *
     * @throws ExceptionInInitializerError if there is no such field: the class cannot work without it
     */
    public static VarHandle field(MethodHandles.Lookup lookup, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
