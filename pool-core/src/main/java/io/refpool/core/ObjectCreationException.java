package io.refpool.core;

/**
 * The factory of a key threw a checked exception.
 *
 * <pre>{@code
 * try (Attachment attached = pool.attach();
 *      Handle<Session> session = pool.acquire("tenant-7")) {
 *     session.run(s -> s.ping());
 * } catch (ObjectCreationException e) {
 *     log.warn("could not open the session", e.getCause());   // e.g. an IOException
 * }
 * }</pre>
 *
 * <p>Every acquirer of the key that waited for that creation gets the same exception, with the
 * factory's exception as its cause; the key's next acquire tries the factory again. Unchecked
 * exceptions and errors from the factory reach the acquirers as they were thrown.
 */
public final class ObjectCreationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message names the key
     * @param cause what the factory threw
     */
    public ObjectCreationException(String message, Throwable cause) {
        super(message, cause);
    }
}
