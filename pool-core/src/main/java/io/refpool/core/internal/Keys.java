package io.refpool.core.internal;

/**
 * Describes keys and objects in messages without trusting their {@code toString}: user code may
 * throw from it anywhere, and a message built after a reference or a permit was taken must not
 * lose either.
 */
final class Keys {
    private Keys() {}

    /** {@return {@code key} quoted, or a description of it if its {@code toString} throws} */
    static String describe(Object key) {
        String text = text(key);
        return text.startsWith("<") ? text : "'" + text + "'";
    }

    /**
     * {@return {@code key}'s {@code toString}, or a description of it in angle brackets if that
     * throws or returns {@code null}}; never {@code null}
     */
    static String text(Object key) {
        if (key == null) {
            return "null";
        }
        String text;
        try {
            text = key.toString();
        } catch (Throwable toStringFailed) { // whatever it throws: the message must still be built
            return "<" + key.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(key))
                    + ", whose toString() threw " + toStringFailed.getClass().getName() + ">";
        }
        return text != null
                ? text
                : "<" + key.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(key))
                        + ", whose toString() returned null>";
    }

    /**
     * {@return a failure as a message names it: its class and its own message}, without trusting
     * the failure's {@code getMessage}, which user code may override to throw
     */
    static String describeFailure(Throwable failure) {
        String name = failure.getClass().getName();
        try {
            String message = failure.getMessage();
            return message == null ? name : name + ": " + message;
        } catch (Throwable messageFailed) {
            return name;
        }
    }
}
