package io.refpool.sync.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Tells a virtual thread from a platform thread on JDK 21 and later, and answers "platform" on
 * JDK 17, which has none; the library is compiled for 17, so {@code Thread.isVirtual()} is looked
 * up once, not linked.
 *
 * <pre>{@code
 * int budget = VirtualThreads.isVirtual(Thread.currentThread()) ? 128 : 2048;
 * }</pre>
 */
final class VirtualThreads {
    /** {@code Thread.isVirtual()}, or {@code null} before JDK 21. */
    private static final MethodHandle IS_VIRTUAL = find();

    private VirtualThreads() {}

    private static MethodHandle find() {
        try {
            return MethodHandles.publicLookup()
                    .findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException before21) {
            return null;
        }
    }

    /** {@return whether {@code thread} is a virtual thread} */
    static boolean isVirtual(Thread thread) {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(thread);
        } catch (Throwable unexpected) { // isVirtual() throws nothing
            return false;
        }
    }
}
