package io.refpool.core;

import java.util.function.Supplier;

/**
 * A scope during which the calling thread is attached to a pool's engine.
 *
 * <pre>{@code
 * try (Attachment attached = pool.attach()) {           // applies pending releases if any
 *     try (Handle<Session> session = pool.acquire("tenant-7")) {
 *         session.run(s -> s.refresh());                             // in the object's section
 *         String report = attached.detached(() -> http.get(url));   // gate given up meanwhile
 *         session.run(s -> s.store(report));
 *     }
 * }
 * }</pre>
 *
 * <p>An attachment belongs to the thread that opened it and is reentrant: attaching again while
 * attached only deepens a per-thread count (and checks for pending releases), and the gate is given
 * up when the outermost attachment closes. Close attachments innermost first, on the thread that
 * opened them, exactly once; anything else is an {@link IllegalStateException}. A thread that ends
 * with an attachment open keeps its hold of the gate for ever: the pool's close and every
 * {@code stopTheWorld()} (in {@link AttachMode#GLOBAL} mode, every attach) wait for it, and the
 * pool reports the thread by name as {@link PoolError.Kind#THREAD_ENDED_ATTACHED} when a close
 * starts, a bounded close reaches its limit, or a timed wait of the pool times out.
 */
public interface Attachment extends AutoCloseable {
    /**
     * Gives the gate up around {@code work} (for blocking work that does not need the engine) and
     * takes it back before returning, even if {@code work} throws. While {@code work} runs the thread
     * is not attached: handles it closes are deferred and {@link RefPool#acquire} is refused. In a
     * {@link AttachMode#GLOBAL} pool's factory, which runs with the gate given up, it runs
     * {@code work} as it is. A section taken with {@link Handle#sectionAsync} belongs to no thread,
     * so this call cannot see it: do not call it while holding one, for the reason the
     * {@code IllegalStateException} below gives for a section this thread holds. Attachments
     * {@code work} opens and leaves open end when it returns, as in {@link RefPool#attached(AttachedWork)}.
     *
     * @param work what to run detached
     * @param <T> its result type
     * @return what {@code work} returned
     * @throws IllegalStateException if called on another thread, on a closed attachment, inside a
     *     {@code detached()} section of this attachment, or while the thread holds an object's
     *     section ({@link Handle#section()}, or inside {@code call}): taking the gate back could then
     *     wait behind a {@link RefPool#stopTheWorld()} that waits for a thread that waits for that
     *     section
     */
    <T> T detached(Supplier<T> work);

    /**
     * Ends this scope; the outermost one also checks for pending releases and gives the gate up.
     *
     * @throws IllegalStateException if called on another thread, twice, out of nesting order, or while
     *     the attachment is suspended: inside its own {@code detached()} section, or from a
     *     {@link AttachMode#GLOBAL} factory that its acquire runs with the gate given up
     */
    @Override
    void close();
}
