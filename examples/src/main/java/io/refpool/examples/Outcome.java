package io.refpool.examples;

import java.time.Duration;

/**
 * What a plugin host answers for one script: its value, or why there is none.
 *
 * <pre>{@code
 * Outcome outcome = host.run("tenant-7", script);
 * if (outcome instanceof Outcome.Value value) {
 *     System.out.println(value.text());
 * } else {
 *     System.out.println("refused: " + outcome);
 * }
 * }</pre>
 *
 * <p>Only {@link TimedOut} and {@link Corrupted} retire the tenant's interpreter: a script that
 * raised an error ({@link ScriptError}) leaves it as it was.
 */
public sealed interface Outcome {
    /** The script ran to its end; {@code text} is its result as a string. */
    record Value(String text) implements Outcome {}

    /** The script raised an error; the interpreter is sound and serves the tenant's next script. */
    record ScriptError(String message) implements Outcome {}

    /** The script ran past {@code limit} and was stopped; its interpreter was retired. */
    record TimedOut(Duration limit) implements Outcome {}

    /**
     * The script rebound or removed a global that later scripts rely on ({@code damage} names it);
     * its interpreter was retired, and the tenant's next script gets a fresh one.
     */
    record Corrupted(String damage) implements Outcome {}
}
