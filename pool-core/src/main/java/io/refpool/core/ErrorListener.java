package io.refpool.core;

/**
 * Receives what goes wrong inside a pool without a caller to throw it to.
 *
 * <pre>{@code
 * List<PoolError> errors = new CopyOnWriteArrayList<>();
 * RefPool<String, Session> pool = RefPool.builder((String tenant) -> engine.open(tenant))
 *         .errorListener(errors::add)
 *         .build();
 * }</pre>
 *
 * <p>The default logs each error through {@link System.Logger} {@code io.refpool} at
 * {@code WARNING}. The listener runs on whichever thread met the error (often an attached one) and
 * must not block; an exception it throws is logged, with the report it was given, and otherwise
 * ignored; if the log throws too, that is ignored as well: a report never fails the pool code that
 * made it.
 */
@FunctionalInterface
public interface ErrorListener {
    /**
     * Called once per error.
     *
     * @param error what went wrong
     */
    void onError(PoolError error);
}
