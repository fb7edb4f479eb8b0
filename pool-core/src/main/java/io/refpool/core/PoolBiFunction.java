package io.refpool.core;

/**
 * A function run on two pooled objects at once by {@code pool.call(first, second, fn)}, which may
 * throw a checked exception; the call rethrows it as it is.
 *
 * <pre>{@code
 * boolean copied = pool.call("tenant-1", "tenant-2", (from, to) -> from.copyTo(to));
 * }</pre>
 *
 * @param <V> the object type
 * @param <T> the result type
 * @param <E> the checked exception it may throw
 */
@FunctionalInterface
public interface PoolBiFunction<V, T, E extends Exception> {
    /**
     * Runs on both objects, in both sections where the mode says so.
     *
     * @param first the object of the first key
     * @param second the object of the second key (the same object if the keys are equal)
     * @return the result the call returns
     * @throws E what the call rethrows
     */
    T apply(V first, V second) throws E;
}
