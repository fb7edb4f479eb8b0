package io.refpool.bench.runner;

/**
 * A command line the runner cannot follow: an unknown option or suite, or a bad value. The runner
 * prints the message and the usage on stderr and exits with status 2.
 *
 * <pre>{@code
 * throw new UsageException("--threads: '0' is not a positive thread count");
 * }</pre>
 */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }
}
