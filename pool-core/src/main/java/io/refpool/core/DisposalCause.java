package io.refpool.core;

/**
 * Why the pool disposed an object: what a {@link Disposer} is told, and what
 * {@link PoolStats#disposals(DisposalCause)} counts.
 *
 * <pre>{@code
 * RefPool<String, Session> sessions = RefPool.builder(engine::open)
 *         .disposer((tenant, session, cause) -> {
 *             if (cause == DisposalCause.INVALIDATED) {
 *                 session.store("retired: " + tenant);
 *             }
 *             session.close();
 *         })
 *         .build();
 * }</pre>
 */
public enum DisposalCause {
    /** Its last handle closed and it was not kept idle: the pool has no idle cache, or the cache refused it. */
    RELEASED,
    /** The idle cache's size or weight bound evicted it. */
    SIZE,
    /** The idle cache's expiry evicted it. */
    EXPIRED,
    /**
     * The idle cache's weak or soft references let it go. Never given today: {@code build()}
     * refuses an idle cache with weak or soft references, which the pool's own strong ones would
     * keep from ever letting an object go.
     */
    COLLECTED,
    /**
     * Room was needed under {@code maxObjects}: an idle object evicted for a new one, or an object
     * reaching count 0 while acquirers of other keys waited in line for capacity.
     */
    CAPACITY,
    /** {@link RefPool#invalidate(Object)} or {@link RefPool#invalidate(Object, Object)} retired it. */
    INVALIDATED,
    /** Its holder retired exactly this object: {@link Handle#invalidate()}. */
    RETIRED,
    /** {@link RefPool#clearIdle} disposed it. */
    CLEARED,
    /** The pool closed. */
    CLOSED,
    /**
     * The factory made it, but the pool could not publish it (the key's {@code hashCode} or
     * {@code equals} threw): nobody ever held it.
     */
    CREATION_FAILED,
    /**
     * The pool's {@link Interrupter} stopped a call running on it and asked to retire it (or threw);
     * disposed when the call, and every other holder, let go.
     */
    INTERRUPTED,
    /**
     * The {@linkplain RefPool.Builder#validator validator} refused it (or threw) when an acquire
     * revived it from idle; the acquire went on with a new object.
     */
    FAILED_VALIDATION,
    /**
     * It outlived its {@linkplain RefPool.Builder#maxLifetime maximum lifetime}: retired when its
     * count reached zero, or when an acquire would have revived it, never under an open handle.
     */
    LIFETIME
}
