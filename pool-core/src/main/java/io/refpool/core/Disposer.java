package io.refpool.core;

/**
 * Disposes an object the pool is done with, told its key and why.
 *
 * <pre>{@code
 * RefPool<String, Session> sessions = RefPool.builder(engine::open)
 *         .disposer((tenant, session, cause) -> {
 *             session.store(tenant + " closed: " + cause); // may throw a checked exception too
 *             session.close();
 *         })
 *         .build();
 * }</pre>
 *
 * <p>It runs attached to the pool, exactly once per object, outside every internal lock;
 * whatever it throws (checked exceptions too) is reported to the error listener, and the object
 * counts as disposed, its capacity given back.
 *
 * <p>It may use the pool. A key's next object is created only after the disposer of the one
 * before it returned, so an acquire of a key whose object is being disposed waits for that
 * disposer: from the disposer of that same object it throws {@link IllegalStateException} rather
 * than wait for itself, and two disposers running at once that each acquire the other's key wait
 * for each other for ever, as two locks taken in opposite orders do.
 *
 * <p>The one-argument form, {@code disposer(Session::close)} with a {@code Consumer}, stays
 * available for disposers that need neither key nor cause.
 *
 * @param <K> key type
 * @param <V> object type
 */
@FunctionalInterface
public interface Disposer<K, V> {
    /**
     * Disposes {@code value}, the object of {@code key}.
     *
     * @param key the object's key
     * @param value the object
     * @param cause why the pool disposes it
     * @throws Exception if disposing fails; reported, never retried
     */
    void dispose(K key, V value, DisposalCause cause) throws Exception;
}
