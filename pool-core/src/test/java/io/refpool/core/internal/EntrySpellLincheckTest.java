package io.refpool.core.internal;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the hot key's deferred idle decision on an {@link Entry} alone: a zero starts a new
 * idle spell only if the current one was recorded (by the cache's put or an eviction), so a key
 * revived and idled over and over writes nothing but its count. Requests (revive, idle) race
 * records and the drain's decisions in every interleaving explored.
 *
 * <p>What the drain relies on, checked on every decision: once a release to 0 that began after a
 * record has returned, the spell differs from the recorded one, so an object used since the cache
 * decided is never judged "idle since". Each release takes a ticket right after its decrement and
 * publishes it once its idle decision returned; each record notes the last ticket after it recorded.
 */
public class EntrySpellLincheckTest {
    private final Entry<String, Object> entry = new Entry<>("k", new Object(), null);
    private final AtomicInteger tickets = new AtomicInteger();
    /** The highest ticket whose release returned. */
    private final AtomicInteger returned = new AtomicInteger();

    private final ConcurrentLinkedQueue<int[]> records = new ConcurrentLinkedQueue<>();
    private final AtomicReference<String> violation = new AtomicReference<>();

    public EntrySpellLincheckTest() {
        entry.release(); // the creator's reference given back: idle at 0
        entry.beginIdleSpell();
        entry.recordSpell(); // the cache took it
    }

    /** A request: revive (or share), use, idle again (the zero's decision, as IdleTier makes it). */
    @Operation
    public void request() {
        if (entry.tryRetain() < 0) {
            return;
        }
        if (entry.release() == 0) {
            int ticket = tickets.incrementAndGet();
            entry.beginIdleSpell();
            returned.accumulateAndGet(ticket, Math::max);
        }
    }

    /** The cache records the spell: its put, or an eviction it queues. */
    @Operation
    public void record() {
        int spell = entry.recordSpell();
        records.add(new int[] {spell, tickets.get()});
    }

    /** The drain's decision on a queued eviction: idle since the record, or used since. */
    @Operation
    public void decide() {
        int[] record = records.poll();
        if (record == null) {
            return;
        }
        int usedUpTo = returned.get();
        if (entry.idleSpell() == record[0] && usedUpTo > record[1]) {
            violation.compareAndSet(
                    null, "a release after the record returned, yet the spell says idle since: " + record[0]);
        }
    }

    @Validate
    public void usedSinceIsNeverIdleSince() {
        if (violation.get() != null) {
            throw new IllegalStateException(violation.get());
        }
    }

    @Test
    void revivesRecordsAndDecisionsInEveryInterleaving() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(30)
                .invocationsPerIteration(500)
                .check(EntrySpellLincheckTest.class);
    }
}
