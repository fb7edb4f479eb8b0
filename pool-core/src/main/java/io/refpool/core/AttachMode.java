package io.refpool.core;

/**
 * How threads attach to a pool's engine, and who may use an object at once.
 *
 * <pre>{@code
 * RefPool<String, Session> pool = RefPool.builder((String tenant) -> engine.open(tenant))
 *         .attachMode(AttachMode.PER_OBJECT)   // engine shared, each object single-threaded
 *         .build();
 * String answer = pool.call("tenant-7", session -> session.query("select 1"));
 * }</pre>
 *
 * <table>
 *   <caption>The modes</caption>
 *   <tr><th>mode</th><th>threads attached at once</th><th>threads in one object at once</th></tr>
 *   <tr><td>{@link #EXCLUSIVE}</td><td>one</td><td>one (the attached thread)</td></tr>
 *   <tr><td>{@link #SHARED}</td><td>any</td><td>any: the object must be thread-safe, or the caller
 *       takes {@link Handle#exclusive()} itself</td></tr>
 *   <tr><td>{@link #PER_OBJECT}</td><td>any</td><td>one: {@code pool.call} and
 *       {@code pool.callAsync} hold the object's section around the function</td></tr>
 * </table>
 *
 * <p>In every mode {@link Handle#exclusive()} takes an object's own section, and
 * {@code pool.exclusive()} stops the world (in {@code EXCLUSIVE} mode it is {@code attach()}).
 */
public enum AttachMode {
    /** One thread attached at a time, like a global interpreter lock. */
    EXCLUSIVE,
    /** Any number of threads attached at once; {@code pool.exclusive()} stops the world. */
    SHARED,
    /**
     * Any number of threads attached at once, as in {@link #SHARED}, and each object used by one
     * thread at a time: {@code pool.call} and {@code pool.callAsync} hold the object's section (its
     * own FIFO lock, {@link Handle#exclusive()}) around the function, so different objects run in
     * parallel and one object never runs on two threads. {@code pool.exclusive()} still stops the
     * world.
     */
    PER_OBJECT
}
