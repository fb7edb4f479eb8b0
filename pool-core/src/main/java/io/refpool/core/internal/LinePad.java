package io.refpool.core.internal;

/**
 * 64 bytes laid out before a subclass's fields, so a word the subclass writes on every request
 * never shares a cache line with the end of the object before it in memory (another thread's
 * state, after a collection copied the two next to each other). The virtual machine lays a
 * superclass's fields out first, but fills the gap after the object header with the first field
 * that fits, whichever class declares it: {@code filler} takes that gap here.
 */
abstract class LinePad {
    @SuppressWarnings("unused")
    private int filler;

    @SuppressWarnings("unused")
    private long p0, p1, p2, p3, p4, p5, p6, p7;
}
