package io.refpool.core.internal;

import io.refpool.sync.Guard;
import java.util.ArrayDeque;

/**
 * One thread's attachment to one pool: its nesting depth, how it holds the gate, its reusable
 * scope objects and its disposal work list. Touched only by its own thread.
 *
 * <p>{@code attacher} is set only while the thread is attached, so a thread that outlives a pool
 * it once attached to does not keep the pool reachable through its thread-local map.
 *
 * <p>Scope objects are reused per slot, two per slot taken in turn, so that closing an attachment
 * again after its thread attached once more in that slot still finds it closed and throws. A
 * {@code detached()} section at depth {@code d} moves
 * {@code base} up by {@code d} for its duration, so attachments opened on this thread meanwhile
 * (an async attachment granted to it, a nested attach inside {@code work}) use slots above the
 * suspended ones and never reopen a scope that is still open below.
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

    /** Slots below this belong to attachments suspended by {@code detached()} sections. */
    int base;

    private AttachScope[] scopes = new AttachScope[4];

    /** A disposal loop longer than this replaces its grown work list with a small one. */
    static final int DISPOSALS_KEPT = 64;

    /** Objects to dispose, run in a loop by the outermost disposal on this thread (no recursion). */
    ArrayDeque<Entry<?, ?>> disposals = new ArrayDeque<>();

    boolean disposing;

    AttachState(Thread thread) {
        this.thread = thread;
    }

    /** Drops an empty work list that grew in a long disposal loop, so its array does not stay. */
    void shrinkDisposals() {
        if (disposals.isEmpty()) {
            disposals = new ArrayDeque<>();
        }
    }

    /** {@return the scope object for nesting level {@code level} above {@code base}, reopened} */
    AttachScope open(int level) {
        int slot = base + level - 1;
        if (slot >= scopes.length) {
            AttachScope[] grown = new AttachScope[Math.max(scopes.length * 2, slot + 1)];
            System.arraycopy(scopes, 0, grown, 0, scopes.length);
            scopes = grown;
        }
        AttachScope scope = scopes[slot];
        if (scope == null) {
            scope = new AttachScope(this, slot);
            AttachScope twin = new AttachScope(this, slot);
            scope.twin = twin;
            twin.twin = scope;
        }
        scopes[slot] = scope.twin; // the next attachment in this slot gets the other one
        scope.level = level;
        scope.open = true;
        return scope;
    }
}
