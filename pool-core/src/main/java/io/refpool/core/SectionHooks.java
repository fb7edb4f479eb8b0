package io.refpool.core;

import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Binds an object to the thread that takes its section: {@link #enter} runs on that thread once
 * it holds the section, before any code of the caller uses the object, and {@link #leave} on the
 * same thread when it lets go, before the section is released.
 *
 * <pre>{@code
 * RefPool<String, Session> sessions = RefPool.builder(engine::open)
 *         .sectionHooks(SectionHooks.of(
 *                 (String tenant, Session session) -> session.ping(),       // section taken
 *                 (String tenant, Session session) -> session.refresh()))   // about to be released
 *         .build();
 * }</pre>
 *
 * <p>They are made for an engine that binds itself to a thread (Rhino {@code
 * Context.enter}/{@code exit}, GraalJS {@code Context.enter}/{@code leave}). Set them with {@link
 * RefPool.Builder#sectionHooks}.
 *
 * <p>They run wherever a section is taken: {@code pool.call} and {@code run} in
 * {@link AttachMode#PER_OBJECT} mode (around the function), {@code callAsync} (on the executor
 * thread that runs the function), {@link Handle#section()} (at its entry and at the guard's close).
 * For {@link Handle#sectionAsync}, {@code enter} runs on the thread that grants the section, before
 * the stage completes, and {@code leave} on the thread that closes the guard. A section is never
 * taken twice by one thread (a second take throws), so the hooks run once per hold.
 *
 * <p><b>Failures.</b> An {@code enter} that throws leaves the section free: the call, or the
 * {@code section()}, fails with its exception, and the failure is also reported to the error
 * listener as {@link PoolError.Kind#SECTION_HOOK_FAILED}, which decides the object's fate (it may
 * invalidate it). A {@code leave} that throws is reported the same way; the section is released
 * anyway, and the call returns what its function returned.
 *
 * @param <K> key type
 * @param <V> object type
 */
public interface SectionHooks<K, V> {
    /**
     * Runs on the thread that took the section, after it holds it.
     *
     * <pre>{@code
     * RefPool<String, Session> pool = RefPool.builder(engine::open)
     *         .sectionHooks(new SectionHooks<String, Session>() {
     *             public void enter(String tenant, Session session) {
     *                 session.ping();                     // the section is held
     *             }
     *
     *             public void leave(String tenant, Session session) {}
     *         })
     *         .build();
     * }</pre>
     *
     * @param key the object's key
     * @param object the object
     */
    void enter(K key, V object);

    /**
     * Runs on the thread that holds the section, before it is released.
     *
     * <pre>{@code
     * RefPool<String, Session> pool = RefPool.builder(engine::open)
     *         .sectionHooks(SectionHooks.of(
     *                 (String tenant, Session s) -> {}, (String tenant, Session s) -> s.refresh()))
     *         .build();
     * }</pre>
     *
     * @param key the object's key
     * @param object the object
     */
    void leave(K key, V object);

    /**
     * {@return hooks made of two functions}
     *
     * <pre>{@code
     * SectionHooks<String, Session> hooks = SectionHooks.of((t, s) -> s.ping(), (t, s) -> s.refresh());
     * }</pre>
     *
     * @param enter runs as {@link #enter}
     * @param leave runs as {@link #leave}
     * @param <K> key type
     * @param <V> object type
     * @throws NullPointerException if either is null
     */
    static <K, V> SectionHooks<K, V> of(
            BiConsumer<? super K, ? super V> enter, BiConsumer<? super K, ? super V> leave) {
        Objects.requireNonNull(enter, "enter");
        Objects.requireNonNull(leave, "leave");
        return new SectionHooks<>() {
            @Override
            public void enter(K key, V object) {
                enter.accept(key, object);
            }

            @Override
            public void leave(K key, V object) {
                leave.accept(key, object);
            }
        };
    }
}
