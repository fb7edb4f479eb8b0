package io.refpool.core;

/**
 * A void body run on a pooled object by {@code pool.run} or {@code Handle.run}, which may throw a
 * checked exception; the call rethrows it as it is.
 *
 * <pre>{@code
 * pool.run("tenant-7", session -> session.execute(script)); // returns nothing, may throw IOException
 * }</pre>
 *
 * @param <V> the object type
 * @param <E> the checked exception it may throw
 */
@FunctionalInterface
public interface PoolConsumer<V, E extends Exception> {
    /**
     * Runs on {@code object}, in its section where the mode says so.
     *
     * @param object the pooled object
     * @throws E what the call rethrows
     */
    void accept(V object) throws E;
}
