package io.refpool.core.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Timespan;

/** The pool's JFR events: drains, waits for the attach gate, leaked handles, handles held too long. */
final class PoolEvents {
    private PoolEvents() {}

    @Name("io.refpool.Drain")
    @Label("Deferred Release Drain")
    @Category("refpool")
    @Description("An attached thread applied a batch of releases that had been deferred")
    static final class Drain extends Event {
        @Label("Pool")
        String pool;

        @Label("Batch Size")
        int batchSize;
    }

    @Name("io.refpool.AttachWait")
    @Label("Attach Wait")
    @Category("refpool")
    @Description("A thread waited in line for the attach gate")
    static final class AttachWait extends Event {
        @Label("Pool")
        String pool;

        @Label("Exclusive")
        boolean exclusive;
    }

    @Name("io.refpool.Leak")
    @Label("Leaked Handle")
    @Category("refpool")
    @Description("A handle became unreachable while open and was released by the leak detector")
    static final class Leak extends Event {
        @Label("Pool")
        String pool;

        @Label("Key")
        String key;

        @Label("Acquisition Site")
        String site;
    }

    @Name("io.refpool.HeldTooLong")
    @Label("Held Too Long")
    @Category("refpool")
    @Description("A handle or a call was still open past the pool's heldTooLong threshold (reported once)")
    static final class HeldTooLong extends Event {
        @Label("Pool")
        String pool;

        @Label("Key")
        String key;

        @Label("Held")
        @Timespan(Timespan.NANOSECONDS)
        long held;

        @Label("Acquisition Site")
        String site;
    }
}
