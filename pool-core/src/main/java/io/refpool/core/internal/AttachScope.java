package io.refpool.core.internal;

import io.refpool.core.Attachment;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The {@link Attachment} of one nesting level of one thread. The object is reused for that level,
 * so a nested attach allocates nothing; {@code open} tells a live scope from a closed one.
 */
final class AttachScope implements Attachment {
    private final AttachState state;
    private final int level;
    boolean open;

    AttachScope(AttachState state, int level) {
        this.state = state;
        this.level = level;
    }

    private void checkUsable(String operation) {
        Thread current = Thread.currentThread();
        if (current != state.thread) {
            throw new IllegalStateException(operation + " on thread '" + current.getName()
                    + "' of an attachment opened by thread '" + state.thread.getName()
                    + "': attachments are bound to their thread");
        }
        if (!open) {
            throw new IllegalStateException(operation + " of an attachment that is already closed");
        }
    }

    @Override
    public void close() {
        checkUsable("close()");
        if (state.depth != level) {
            throw new IllegalStateException("close() of the attachment at nesting level " + level + " while level "
                    + state.depth + " is still open: close attachments innermost first");
        }
        open = false;
        if (level == 1) {
            state.attacher.detachOutermost(state);
        } else {
            state.depth = level - 1;
        }
    }

    @Override
    public <T> T detached(Supplier<T> work) {
        Objects.requireNonNull(work, "work");
        checkUsable("detached()");
        return state.attacher.detached(state, work);
    }

    @Override
    public String toString() {
        return "Attachment[level " + level + (open ? ", open" : ", closed") + ", thread '" + state.thread.getName()
                + "']";
    }
}
