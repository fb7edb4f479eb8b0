package io.refpool.core.internal;

/**
 * The words of an {@link Entry} that a request writes (its count) and a zero crossing may write
 * (its idle spells), on cache lines of their own: two requests on different keys never write one
 * line, however the collector lays their entries out. The fields go first in the class
 * hierarchy, after {@link LinePad}'s 64 bytes and before {@link EntryHotPadded}'s, since the
 * virtual machine lays a superclass's fields out before its subclass's.
 */
abstract class EntryHot extends LinePad {
    /** The object's count of references; see {@link Entry} for its states. */
    @SuppressWarnings("unused") // accessed through Entry's handles
    volatile int count;

    /**
     * The idle spell times two, plus one once someone recorded it ({@code Entry.recordSpell}): only a
     * recorded spell needs a successor at the next zero. A hot key revived and idled over and over
     * while the cache holds it thus writes nothing but its count.
     */
    @SuppressWarnings("unused") // accessed through IDLE_SPELLS
    volatile int idleSpells;

    @SuppressWarnings("unused") // accessed through CACHED_SPELL
    volatile int cachedSpell = Entry.NOT_CACHED;
}

/** 64 bytes after {@link EntryHot}'s fields. */
abstract class EntryHotPadded extends EntryHot {
    @SuppressWarnings("unused")
    long q0, q1;
    long q2, q3;
    long q4, q5;
    long q6, q7;
}
