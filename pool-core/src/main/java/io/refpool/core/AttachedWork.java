package io.refpool.core;

/**
 * Work that {@code pool.attached} runs attached, returning a result, which may throw a checked
 * exception; {@code attached} rethrows it as it is.
 *
 * <pre>{@code
 * long live = pool.attached(() -> pool.stats().live());
 * pool.runAttached(() -> pool.flush());                 // a void body: AttachedAction
 * }</pre>
 *
 * @param <T> the result type
 * @param <E> the checked exception it may throw
 */
@FunctionalInterface
public interface AttachedWork<T, E extends Exception> {
    /**
     * Runs attached.
     *
     * @return what {@code attached} returns
     * @throws E what {@code attached} rethrows
     */
    T get() throws E;
}
