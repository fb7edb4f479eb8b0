package io.refpool.core;

/**
 * A function run on a pooled object by {@code pool.call} or {@code Handle.call}, which may throw a
 * checked exception; the call rethrows it as it is.
 *
 * <pre>{@code
 * String page = pool.call("tenant-7", session -> session.render("index")); // render throws IOException
 * }</pre>
 *
 * <p>A lambda that throws no checked exception makes {@code E} a {@code RuntimeException}, so the
 * call declares nothing to catch.
 *
 * @param <V> the object type
 * @param <T> the result type
 * @param <E> the checked exception it may throw
 */
@FunctionalInterface
public interface PoolFunction<V, T, E extends Exception> {
    /**
     * Runs on {@code object}, in its section where the mode says so.
     *
     * @param object the pooled object
     * @return the result the call returns
     * @throws E what the call rethrows
     */
    T apply(V object) throws E;
}
