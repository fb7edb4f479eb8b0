package io.refpool.core.internal;

/**
 * The fields of an {@link AttachScope}, written on every attach of its level, between
 * {@link LinePad}'s 64 bytes and those {@link AttachScope} adds after them, as for
 * {@link AttachStateFields}.
 */
abstract class AttachScopeFields extends LinePad {
    final AttachState state;
    /** This scope's index in its thread's scope slots. */
    final int slot;
    /** The nesting level this scope was last opened at. */
    int level;
    /** The other scope of this slot. */
    AttachScope twin;

    /** On the slot's first scope (the one in the thread's slots): whether its twin opens next. */
    boolean twinsTurn;

    boolean open;

    /**
     * Whether this open scope is a {@code stopTheWorld()} nested in a plain {@code GLOBAL} attachment:
     * closing it, or ending it with its closure, turns the thread's {@code exclusive} back off.
     */
    boolean stopsWorld;

    AttachScopeFields(AttachState state, int slot) {
        this.state = state;
        this.slot = slot;
    }
}
