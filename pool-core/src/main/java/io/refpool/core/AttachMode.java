package io.refpool.core;

/**
 * How threads attach to a pool's engine.
 *
 * <pre>{@code
 * RefPool<String, Session> pool = RefPool.builder((String tenant) -> engine.open(tenant))
 *         .attachMode(AttachMode.SHARED)
 *         .build();
 * }</pre>
 */
public enum AttachMode {
    /** One thread attached at a time, like a global interpreter lock. */
    EXCLUSIVE,
    /** Any number of threads attached at once; {@code pool.exclusive()} stops the world. */
    SHARED
}
