package io.refpool.core;

/**
 * Creates the object of a key.
 *
 * <pre>{@code
 * ObjectFactory<Path, Script> compile = path -> {
 *     if (!java.nio.file.Files.isReadable(path)) {
 *         throw new java.io.FileNotFoundException(path.toString()); // checked: no wrapper needed
 *     }
 *     return compiler.compile(path);
 * };
 * RefPool<Path, Script> scripts = RefPool.builder(compile).disposer(Script::release).build();
 * }</pre>
 *
 * <p>It may throw checked exceptions: acquirers of the key then get an {@link
 * ObjectCreationException} with the exception as its cause, and the key's next acquire calls the
 * factory again. A non-throwing lambda or method reference is a valid factory.
 *
 * <p>The factory runs outside every internal lock, at most once at a time per key; concurrent
 * acquirers of the key wait for that one call, detached. In {@link AttachMode#GLOBAL} mode the
 * creating thread gives the pool's one gate up while the factory runs, as
 * {@link Attachment#detached} does, and takes it back before the object is published, so a slow
 * creation never stops every other request: a factory that needs the engine to itself there
 * attaches ({@code pool.attach()}) around that part. Only a {@link RefPool#stopTheWorld()} keeps
 * the gate for its factory calls. In the shared modes the factory runs attached (their gate lets
 * other threads in meanwhile). A {@linkplain RefPool#warmUp warm-up}'s factory holds no gate in
 * any mode.
 *
 * @param <K> key type
 * @param <V> object type
 */
@FunctionalInterface
public interface ObjectFactory<K, V> {
    /**
     * Creates the object of {@code key}.
     *
     * @param key the key
     * @return the new object, never {@code null} (the pool refuses one)
     * @throws Exception if the object cannot be created
     */
    V create(K key) throws Exception;
}
