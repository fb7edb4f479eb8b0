package io.refpool.core.internal;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/** Where the running JVM puts an object's fields, for the layout tests. */
public final class FieldLayout {
    private FieldLayout() {}

    /** {@return the instance fields of {@code type} and its superclasses} */
    public static List<Field> instanceFields(Class<?> type) {
        List<Field> fields = new ArrayList<>();
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (!Modifier.isStatic(field.getModifiers())) {
                    fields.add(field);
                }
            }
        }
        return fields;
    }

    /** {@code sun.misc.Unsafe.objectFieldOffset(field)}, called reflectively. */
    public static long offset(Field field) throws ReflectiveOperationException {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        Method objectFieldOffset = unsafeClass.getMethod("objectFieldOffset", Field.class);
        return (long) objectFieldOffset.invoke(theUnsafe.get(null), field);
    }
}
