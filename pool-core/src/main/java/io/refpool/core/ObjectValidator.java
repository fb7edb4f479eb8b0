package io.refpool.core;

/**
 * Checks an idle object before the pool lends it again: run when an acquire revives an object
 * whose count went to zero (an idle one), never on the acquire of an object in use.
 *
 * <pre>{@code
 * RefPool<String, Session> sessions = RefPool.builder(engine::open)
 *         .idle(cache -> cache.maximumSize(16))
 *         .validator((tenant, session) -> session.query("select 1") != null)
 *         .build();
 * }</pre>
 *
 * <p>A {@code false}, or a throw (reported to the error listener as {@link
 * PoolError.Kind#REVIVE_CHECK_FAILED}), disposes the object as {@link
 * DisposalCause#FAILED_VALIDATION}, and the acquire goes on with a new one.
 *
 * <p>It runs attached on the reviving thread, outside every internal lock, once per revive: an
 * acquirer of the same key that comes meanwhile waits for the verdict, then shares the object or
 * the new one, never a disposed one. It must not acquire its own key (that would wait for itself,
 * and throws {@link IllegalStateException}).
 *
 * @param <K> key type
 * @param <V> object type
 */
@FunctionalInterface
public interface ObjectValidator<K, V> {
    /**
     * {@return whether {@code object}, the idle object of {@code key}, may be lent again}
     *
     * @param key the object's key
     * @param object the object
     * @throws Exception if the check fails; counts as {@code false}
     */
    boolean isValid(K key, V object) throws Exception;
}
