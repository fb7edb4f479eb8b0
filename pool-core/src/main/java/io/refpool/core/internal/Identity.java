package io.refpool.core.internal;

/**
 * The identity of a pooled instance, as a map key: never calls the object's own {@code equals} or
 * {@code hashCode}, which may throw or change.
 */
final class Identity {
    private final Object value;

    Identity(Object value) {
        this.value = value;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Identity && ((Identity) other).value == value;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(value);
    }
}
