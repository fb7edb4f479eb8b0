package io.refpool.core.internal;

import io.refpool.sync.Guard;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;

/**
 * One thread's attachment to one pool: its nesting depth, how it holds the gate, its reusable
 * scope objects and its disposal work list. Touched only by its own thread, and only through the
 * transitions below (the disposal fields belong to {@link Disposals}).
 *
 * <pre>
 *   depth    to        by                      also
 *   0        1         {@link #enterOutermost}  attacher, exclusive and guard set; scope of level 1
 *   0        1         {@link #enterOutermostWithoutScope}
 *                                               a closure ({@code pool.call}): as above, no scope
 *   d        d + 1     {@link #enterNested}     scope of level d + 1 reopened
 *   d        d + 1     {@code Attacher.enterClosure}
 *                                               a nested closure: the depth only, no scope
 *   d + 1    d         {@link #leaveNested}     (a scope of level &gt; 1 closed)
 *   1        0         {@link #leaveOutermost}  attacher and guard cleared; the caller then leaves
 *                                               the gate, so a grant it hands over finds depth 0
 *   d        0         {@link #suspend}         detached(): base moves up by d, attacher and guard
 *                                               cleared
 *   0        d         {@link #resume}          the gate is held again; base, attacher and the way
 *                                               the gate is held restored
 *   d        1         {@link #unwindTo1}       an async function returned with scopes left open
 *   d        level     {@code Attacher.exitClosure} a closure returned; {@link #endScopesAbove} marks
 *                                               the scopes it left open closed
 * </pre>
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
final class AttachState extends AttachStateFields {
    /** A disposal loop longer than this replaces its grown work list with a small one. */
    static final int DISPOSALS_KEPT = 64;

    /** After the fields: 64 bytes between them and the object next in memory (see {@link LinePad}). */
    @SuppressWarnings("unused")
    private long q0, q1, q2, q3, q4, q5, q6, q7;

    private static final VarHandle IDLE_HITS =
            FieldHandles.find(MethodHandles.lookup(), AttachStateFields.class, "idleHits", long.class);
    private static final VarHandle ZEROES =
            FieldHandles.find(MethodHandles.lookup(), AttachStateFields.class, "zeroes", long.class);

    AttachState(Thread thread) {
        super(thread);
    }

    /** One idle hit of this thread's own, which it alone writes: a plain, untorn store. */
    void countIdleHit() {
        IDLE_HITS.setOpaque(this, idleHits + 1);
    }

    /** One zero of this thread's own, as {@link #countIdleHit}. */
    void countZero() {
        ZEROES.setOpaque(this, zeroes + 1);
    }

    /** {@return this thread's own idle hits}, from any thread */
    long ownIdleHits() {
        return (long) IDLE_HITS.getOpaque(this);
    }

    /** {@return this thread's own zeroes}, from any thread */
    long ownZeroes() {
        return (long) ZEROES.getOpaque(this);
    }

    /** A nested attach: one level deeper, in a reopened scope object. */
    AttachScope enterNested() {
        int level = depth + 1;
        AttachScope scope = open(level);
        depth = level;
        return scope;
    }

    /** The outermost attach, once the gate is entered ({@code guard} if it had to wait, else null). */
    AttachScope enterOutermost(Attacher<?, ?> owner, boolean exclusively, Guard waitedGuard) {
        attacher = owner;
        exclusive = exclusively;
        guard = waitedGuard;
        depth = 1;
        return open(1);
    }

    /** The outermost attach of a closure: as {@link #enterOutermost}, shared, with no scope object. */
    void enterOutermostWithoutScope(Attacher<?, ?> owner, Guard waitedGuard) {
        attacher = owner;
        exclusive = false;
        guard = waitedGuard;
        depth = 1;
    }

    /** The nested {@code scope} closed: the depth drops back below its level. */
    void leaveNested(AttachScope scope) {
        scope.open = false;
        endsWorldStop(scope);
        depth = scope.level - 1;
    }

    /** A scope that stopped the world within a plain attachment ends: the attachment is plain again. */
    private void endsWorldStop(AttachScope scope) {
        if (scope.stopsWorld) {
            scope.stopsWorld = false;
            exclusive = false;
        }
    }

    /** The outermost detach. @return the guard to close, or {@code null} to leave the gate raw */
    Guard leaveOutermost() {
        depth = 0;
        attacher = null;
        Guard held = guard;
        guard = null;
        return held;
    }

    /** A {@code detached()} section starts. @return the depth to resume at */
    int suspend() {
        int suspended = depth;
        base += suspended; // attachments opened meanwhile use the slots above the suspended ones
        depth = 0;
        attacher = null;
        guard = null; // the caller leaves the gate with the guard it read before
        return suspended;
    }

    /** A {@code detached()} section ends, the gate held again. */
    void resume(Attacher<?, ?> owner, int suspended, boolean exclusively, Guard waitedGuard) {
        exclusive = exclusively; // an attachment opened and closed meanwhile may have changed it
        guard = waitedGuard;
        attacher = owner;
        base -= suspended;
        depth = suspended;
    }

    /** An async function returned with scopes still open inside its own: they end with it. */
    void unwindTo1() {
        endScopesAbove(1);
        depth = 1;
    }

    /**
     * Ends the scopes of every level above {@code level} that work left open (a closure, or an
     * async function, returned): each is marked closed, so a later {@code close()} of one throws
     * instead of closing whichever attachment holds its level by then.
     */
    void endScopesAbove(int level) {
        for (int slot = base + level; slot < base + depth && slot < scopes.length; slot++) {
            AttachScope scope = scopes[slot];
            if (scope != null) { // the open one of the two, not known here, ends; the other is closed already
                scope.open = false;
                scope.twin.open = false;
                endsWorldStop(scope);
                endsWorldStop(scope.twin);
            }
        }
    }

    /** Drops an empty work list that grew in a long disposal loop, so its array does not stay. */
    void shrinkDisposals() {
        if (disposals.isEmpty()) {
            disposals = new ArrayDeque<>();
        }
    }

    /**
     * {@return the scope object for nesting level {@code level} above {@code base}, reopened}: the
     * slot's two scopes in turn. The turn is a flag on the slot's first scope, not the slot's
     * array element, so reopening writes no reference: a reference store pays the collector's write
     * barrier, which in G1 fences when the array and the scope sit in different old regions.
     */
    AttachScope open(int level) {
        int slot = base + level - 1;
        AttachScope first = secondSlot;
        if (slot != 1 || first == null) {
            AttachScope[] slots = scopes;
            if (slot >= slots.length || (first = slots[slot]) == null) {
                first = firstOpen(slot);
            }
        }
        boolean twinsTurn = first.twinsTurn;
        first.twinsTurn = !twinsTurn;
        AttachScope scope = twinsTurn ? first.twin : first;
        scope.level = level;
        scope.open = true;
        return scope;
    }

    /** The slot's first attachment: grows the slots if needed and makes the slot's two scopes. */
    private AttachScope firstOpen(int slot) {
        if (slot >= scopes.length) {
            AttachScope[] grown = new AttachScope[Math.max(scopes.length * 2, slot + 1)];
            System.arraycopy(scopes, 0, grown, 0, scopes.length);
            scopes = grown;
        }
        AttachScope first = new AttachScope(this, slot);
        AttachScope twin = new AttachScope(this, slot);
        first.twin = twin;
        twin.twin = first;
        scopes[slot] = first;
        if (slot == 1) {
            secondSlot = first;
        }
        return first;
    }
}
