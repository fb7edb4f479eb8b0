package io.refpool.core.internal;

import io.refpool.sync.Guard;
import java.util.ArrayDeque;

/**
 * One thread's attachment to one pool: its nesting depth, how it holds the gate, its reusable
 * scope objects and its disposal work list. Touched only by its own thread.
 *
 * <p>{@code attacher} is set only while the thread is attached, so a thread that outlives a pool
 * it once attached to does not keep the pool reachable through its thread-local map.
 */
final class AttachState {
    final Thread thread;

    /** The pool's attacher while attached ({@code depth > 0}), otherwise {@code null}. */
    Attacher<?, ?> attacher;

    int depth;
    /** Whether the outermost attachment holds the gate exclusively. */
    boolean exclusive;
    /** The guard of an outermost attachment that had to wait; {@code null} if it entered at once. */
    Guard guard;

    private AttachScope[] scopes = new AttachScope[4];

    /** Objects to dispose, run in a loop by the outermost disposal on this thread (no recursion). */
    final ArrayDeque<Entry<?, ?>> disposals = new ArrayDeque<>();

    boolean disposing;

    AttachState(Thread thread) {
        this.thread = thread;
    }

    /** {@return the scope object for nesting level {@code level}, reopened} */
    AttachScope open(int level) {
        if (level > scopes.length) {
            AttachScope[] grown = new AttachScope[scopes.length * 2];
            System.arraycopy(scopes, 0, grown, 0, scopes.length);
            scopes = grown;
        }
        AttachScope scope = scopes[level - 1];
        if (scope == null) {
            scope = new AttachScope(this, level);
            scopes[level - 1] = scope;
        }
        scope.open = true;
        return scope;
    }
}
