package io.refpool.core;

/**
 * How threads attach to a pool's engine, and who may use an object at once.
 *
 * <pre>{@code
 * RefPool<String, Session> pool = RefPool.newBuilder()
 *         .attachMode(AttachMode.PER_OBJECT)   // the default: tenants in parallel, each single-threaded
 *         .build(tenant -> engine.open(tenant));
 * String answer = pool.call("tenant-7", session -> session.query("select 1"));
 * }</pre>
 *
 * <table>
 *   <caption>Which mode do I need?</caption>
 *   <tr><th>your engine</th><th>mode</th><th>threads attached at once</th>
 *       <th>threads in one object at once</th></tr>
 *   <tr><td>each object is single-threaded, objects are independent (an interpreter or context
 *       per tenant)</td><td>{@link #PER_OBJECT} (default)</td><td>any</td><td>one:
 *       {@code pool.call} and {@code Handle.call} hold the object's section around the
 *       function</td></tr>
 *   <tr><td>one engine-wide lock: objects share thread-unsafe state (a runtime with a global
 *       interpreter lock, a single-threaded SDK)</td><td>{@link #GLOBAL}</td><td>one</td><td>one
 *       (the attached thread)</td></tr>
 *   <tr><td>the objects are thread-safe</td><td>{@link #SHARED}</td><td>any</td><td>any (take
 *       {@link Handle#section()} where you need one thread)</td></tr>
 * </table>
 *
 * <p>Three different things keep other threads out, each with its own name: the {@code GLOBAL}
 * mode's one gate; {@link Handle#section()}, an object's own lock (every mode); and
 * {@link RefPool#stopTheWorld()}, which waits until no other thread is attached and keeps them out
 * (in {@code GLOBAL} mode it is {@code attach()}, except that a factory it calls, or its wait for a
 * busy section, keeps the gate, where an {@code attach()} gives it up meanwhile).
 *
 * <p>{@code PER_OBJECT} is the default because it is safe for an engine whose objects are not
 * thread-safe, through {@code call}, and still runs different tenants in parallel.
 */
public enum AttachMode {
    /**
     * One thread attached at a time, like a global interpreter lock. As such a lock, the gate is
     * given up where the thread would block: while it waits for another thread's creation, for a
     * busy section, and while its own factory runs.
     */
    GLOBAL,
    /** Any number of threads attached at once; the objects are thread-safe, or the caller takes sections. */
    SHARED,
    /**
     * Any number of threads attached at once, as in {@link #SHARED}, and each object used by one
     * thread at a time: {@code pool.call}, {@code pool.callAsync} and {@code Handle.call} hold the
     * object's section (its own FIFO lock, {@link Handle#section()}) around the function, so
     * different objects run in parallel and one object never runs on two threads. The default.
     */
    PER_OBJECT
}
