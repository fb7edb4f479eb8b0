package io.refpool.core;

/**
 * Stops a function that runs too long on a pooled object: the pool calls it when a {@code call},
 * {@code run} or {@code callAsync} whose time limit passed, or whose token was cancelled, is
 * still running its function, and when {@link RefPool#close(java.time.Duration)} reaches its
 * limit with calls still running.
 *
 * <pre>{@code
 * RefPool<String, Session> sessions = RefPool.builder(engine::open)
 *         .interrupter((tenant, session) -> {
 *             session.close();                      // the engine's own stop: the script fails
 *             return Interrupter.Outcome.RETIRE;    // and this session is not lent again
 *         })
 *         .build();
 * String out = sessions.call("tenant-7", Duration.ofSeconds(2), session -> session.query("select 1"));
 * }</pre>
 *
 * <p>Set it with {@link RefPool.Builder#interrupter}.
 *
 * <p><b>Contract.</b> It runs at most once per call, and only while the pool has not seen the
 * function return; the call keeps its object, its section and its reference until the interrupter
 * returned, so it never acts on an object another call has taken meanwhile. It runs on the thread
 * that ended the call: for a time limit, a daemon thread of the library's, handed the interrupt
 * when the limit passes (so one that takes long, stopping a script in rounds, delays no other
 * timer; the threads are reused and end when idle); the thread
 * that cancelled the token (for a source's {@code cancelAfter}, a daemon thread of the library's);
 * the thread running {@code
 * close(Duration)}; never holding a lock of the pool. It must not wait for the call it
 * stops, which holds its attachment until the interrupter returned: in {@code GLOBAL} mode it may
 * not attach ({@code invalidate}, {@code clearIdle}, {@code flush} and {@code call} each wait for
 * the gate), and in no mode may it call {@code stopTheWorld()}; return {@link Outcome#RETIRE}
 * rather than invalidate. A {@code close()} it calls starts the close on a thread of its own and
 * returns, and a {@code flush()} on a pool being closed returns at once: the close waits for the
 * call it stops. The function sees whatever the
 * engine does to it (GraalJS throws a {@code PolyglotException}, a LuaJ hook an error), and the
 * call completes with that, as the pool never replaces a function's outcome. The pool never
 * disposes an object under a running function: a retired object is disposed, with
 * {@link DisposalCause#INTERRUPTED}, when its last holder lets go.
 *
 * <p>A two-key {@code call} or {@code run} on two objects ({@link RefPool#call(Object, Object,
 * PoolBiFunction)}) gives the interrupter each object once, the first key's first, and applies
 * each one's outcome to its own object; one key named twice gives its object once.
 *
 * <p>An interrupter that throws is reported to the error listener as
 * {@link PoolError.Kind#INTERRUPTER_FAILED}, and the object is retired: the pool cannot tell
 * what state a half-stopped engine is in.
 *
 * @param <K> key type
 * @param <V> object type
 */
@FunctionalInterface
public interface Interrupter<K, V> {
    /**
     * Stops the function running on {@code object}.
     *
     * <pre>{@code
     * Interrupter<String, Session> keep = (tenant, session) -> Interrupter.Outcome.KEEP;
     * }</pre>
     *
     * @param key the call's key
     * @param object the object the function runs on
     * @return what becomes of the object once the call returns
     * @throws Exception reported; the object is retired
     */
    Outcome interrupt(K key, V object) throws Exception;

    /**
     * What becomes of an interrupted object.
     *
     * <pre>{@code
     * Interrupter.Outcome outcome = Interrupter.Outcome.RETIRE;
     * }</pre>
     */
    enum Outcome {
        /** It stays in the pool: the next call of its key gets it again. */
        KEEP,
        /**
         * It is retired as {@link Handle#invalidate()} retires: the next acquire of the key makes a new
         * one, and it is disposed with {@link DisposalCause#INTERRUPTED} when its last holder lets go.
         */
        RETIRE
    }
}
