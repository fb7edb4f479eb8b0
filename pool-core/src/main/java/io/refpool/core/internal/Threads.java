package io.refpool.core.internal;

/** How a message names a thread: by its name, and by its id when it has none (a virtual thread's). */
final class Threads {
    private Threads() {}

    /** {@return {@code 'name'}, or {@code #id} for a thread without a name} */
    static String describe(Thread thread) {
        String name = thread.getName();
        return name.isEmpty() ? "#" + thread.getId() : "'" + name + "'";
    }
}
