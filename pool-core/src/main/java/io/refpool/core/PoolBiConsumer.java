package io.refpool.core;

/**
 * A void body run on two pooled objects at once by {@code pool.run(first, second, action)}, which
 * may throw a checked exception; the call rethrows it as it is.
 *
 * <pre>{@code
 * pool.run("tenant-1", "tenant-2", (from, to) -> from.mergeInto(to)); // returns nothing
 * }</pre>
 *
 * @param <V> the object type
 * @param <E> the checked exception it may throw
 */
@FunctionalInterface
public interface PoolBiConsumer<V, E extends Exception> {
    /**
     * Runs on both objects, in both sections where the mode says so.
     *
     * @param first the object of the first key
     * @param second the object of the second key (the same object if the keys are equal)
     * @throws E what the call rethrows
     */
    void accept(V first, V second) throws E;
}
