package io.refpool.core.internal;

import io.refpool.core.AttachMode;

/**
 * Which thread may touch an object: the strict-access check of {@code Handle.get()}, and the rule
 * that a section is taken attached. Both read the calling thread's attach state and, for strict
 * access in {@code PER_OBJECT} mode, the section's holder (see the table in {@link Section}); both
 * throw at the call that broke the rule and change nothing.
 */
final class AccessChecks {
    private AccessChecks() {}

    /**
     * Strict access: the calling thread must be attached to the pool and, in {@code PER_OBJECT}
     * mode, hold the object's section (or stop the world with {@code pool.stopTheWorld()}).
     */
    static <K, V> void checkGet(Handles<K, V> handles, Entry<K, V> entry, AttachState opener) {
        Thread me = Thread.currentThread();
        AttachState s = handles.stateOf(opener);
        // after close nobody can attach: the objects still held stay usable, in their sections
        if (s.depth == 0 && !handles.isClosed()) {
            throw new IllegalStateException("get() on the handle for key " + Keys.describe(entry.key) + " of pool '"
                    + handles.name() + "' on thread " + Threads.describe(me) + ", which is not attached to the pool"
                    + " (strictAccess): use the object inside pool.call, or attach first");
        }
        if (handles.attachMode() == AttachMode.PER_OBJECT && !(s.depth > 0 && s.exclusive)) {
            Section section = entry.sectionIfCreated();
            if (section == null || !admits(section, me)) {
                throw new IllegalStateException("get() on the handle for key " + Keys.describe(entry.key)
                        + " of pool '" + handles.name() + "' on thread " + Threads.describe(me)
                        + ", which does not hold the"
                        + " object's section (PER_OBJECT mode, strictAccess): use pool.call, or take"
                        + " Handle.section() first");
            }
        }
    }

    /** {@return whether {@code thread} may use the object of {@code section}: it holds the section, or an async caller does} */
    private static boolean admits(Section section, Thread thread) {
        long h = section.holder();
        return h == thread.getId() || h == Section.ASYNC;
    }

    /**
     * A section is taken attached while the pool is open: a thread that held one unattached and then
     * attached would wait for the gate holding it, against the rule that a section holder never
     * waits for the gate (see {@code Calls}). After close nobody can attach, and objects still held
     * stay usable in their sections.
     */
    static <K, V> void refuseUnattached(Handles<K, V> handles, Entry<K, V> entry) {
        if (!handles.isAttached() && !handles.isClosed()) {
            throw new IllegalStateException("section() on the object of key " + Keys.describe(entry.key)
                    + " of pool '" + handles.name() + "' on thread "
                    + Threads.describe(Thread.currentThread())
                    + ", which is not attached: take the section attached (inside pool.attach() or"
                    + " pool.attached), use pool.call, or use sectionAsync");
        }
    }
}
