package io.refpool.core.internal;

import io.refpool.core.Attachment;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The {@link Attachment} of one nesting level of one thread. The object is reused (with its twin,
 * in turn) for its slot, so a nested attach allocates nothing; {@code open} tells a live scope from
 * a closed one.
 */
final class AttachScope extends AttachScopeFields implements Attachment {
    /** After the fields: 64 bytes between them and the object next in memory (see {@link LinePad}). */
    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6, q7;

    AttachScope(AttachState state, int slot) {
        super(state, slot);
    }

    private void checkUsable(String operation) {
        Thread current = Thread.currentThread();
        if (current != state.thread) {
            throw new IllegalStateException(operation + " on thread " + Threads.describe(current)
                    + " of an attachment opened by thread " + Threads.describe(state.thread)
                    + ": attachments are bound to their thread");
        }
        if (!open) {
            throw new IllegalStateException(operation + " of an attachment that is already closed");
        }
    }

    /**
     * Closes this attachment. The common case, a nested attachment closed innermost on its own
     * thread, is decided by the first test: its level is then the thread's depth (a scope opened
     * before a {@code detached()} section has a slot below {@code base} while the section runs, and
     * fails the comparison at any depth above zero), so the depth drops by one without waiting for a
     * load of the level.
     */
    @Override
    public void close() {
        AttachState s = state;
        int depth = s.depth;
        if (depth > 1 && open && !stopsWorld && s.base + depth - 1 == slot && Thread.currentThread() == s.thread) {
            open = false;
            s.depth = depth - 1;
            return;
        }
        checkUsable("close()");
        if (slot < s.base) { // below the section's levels: suspended, its own section included
            if (depth == 0 && s.poolSuspensions > 0) {
                throw new IllegalStateException("close() of an attachment suspended while the pool runs a factory"
                        + " without the gate: close it after the acquire returns");
            }
            throw new IllegalStateException("close() of an attachment suspended by a detached() section that"
                    + " is still running: close it after the section returns");
        }
        if (s.base + depth - 1 != slot) { // not the innermost open scope of this thread
            throw new IllegalStateException("close() of the attachment at nesting level " + level + " while level "
                    + depth + " is still open: close attachments innermost first");
        }
        if (level == 1) {
            open = false;
            s.attacher.detachOutermost(s);
        } else {
            s.leaveNested(this);
        }
    }

    @Override
    public <T> T detached(Supplier<T> work) {
        Objects.requireNonNull(work, "work");
        checkUsable("detached()");
        if (slot < state.base) {
            if (state.depth == 0 && state.poolSuspensions > 0) {
                return work.get(); // suspended by the pool (a GLOBAL factory), not by a caller: detached already
            }
            throw new IllegalStateException("detached() of an attachment suspended by a detached() section that is"
                    + " still running: the thread is detached already");
        }
        return state.attacher.detachedByCaller(state, work, () -> "detached()");
    }

    @Override
    public String toString() {
        return "Attachment[level " + level + (open ? ", open" : ", closed") + ", thread "
                + Threads.describe(state.thread) + "]";
    }
}
