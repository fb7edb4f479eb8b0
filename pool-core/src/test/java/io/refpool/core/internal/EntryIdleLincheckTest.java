package io.refpool.core.internal;

import io.refpool.core.DisposalCause;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks the transitions of one object in the lazy idle tier with Lincheck, on an
 * {@link Entry} alone: revivals (the fast path's {@code getAndAdd} from 0 to 1), idling (1 to 0,
 * with nothing written to the cache), references taken on one thread and given back on another (a
 * handle closed elsewhere, its decrement applied later), and claims for disposal (the cache's
 * eviction or a capacity reclaim: a CAS from exactly 0 to {@code DISPOSED}), in every interleaving
 * of the explored scenarios.
 *
 * <p>What the tier promises, checked on every step and after every interleaving: a claim never
 * succeeds while a reference is held; a reference is never handed out after a successful claim;
 * at most one claim succeeds; a release never fails (every reference is given back once); and
 * once everything is given back, an object that no claim took is idle at count 0 and can still be
 * claimed, so nothing is left that nobody can dispose.
 */
public class EntryIdleLincheckTest {
    private final Entry<String, Object> entry = new Entry<>("k", new Object(), null);
    /** References taken and not yet given back, as the model sees them. */
    private final AtomicInteger held = new AtomicInteger();

    private final AtomicInteger claims = new AtomicInteger();
    private final AtomicReference<String> violation = new AtomicReference<>();
    /** References handed to another thread, whose close gives them back later. */
    private final ConcurrentLinkedQueue<Boolean> handedOver = new ConcurrentLinkedQueue<>();

    public EntryIdleLincheckTest() {
        entry.release(); // the creator's reference given back: the object idles at 0
    }

    private void fail(String what) {
        violation.compareAndSet(null, what);
    }

    /** Takes a reference as an acquire does; {@return whether it got one} */
    private boolean retain() {
        if (entry.tryRetain() < 0) {
            return false;
        }
        held.incrementAndGet();
        if (claims.get() != 0) {
            fail("a reference was handed out after the object was claimed for disposal");
        }
        return true;
    }

    private void giveBack() {
        held.decrementAndGet();
        try {
            entry.release();
        } catch (Entry.DoubleRelease e) {
            fail("a release of a held reference failed: " + e.getMessage());
        }
    }

    /** A request: revive (or share), use, idle again. */
    @Operation
    public void request() {
        if (retain()) {
            giveBack();
        }
    }

    /** A handle opened here and closed by another thread later. */
    @Operation
    public void openForAnotherThread() {
        if (retain()) {
            handedOver.add(Boolean.TRUE);
        }
    }

    /** The other thread's close of a handed-over handle, applied when its drain gets to it. */
    @Operation
    public void closeHandedOver() {
        if (handedOver.poll() != null) {
            giveBack();
        }
    }

    /** The cache's eviction, or a capacity reclaim: claim the object if it is idle right now. */
    @Operation
    public void claim() {
        if (entry.tryDispose(DisposalCause.RELEASED)) {
            claims.incrementAndGet();
            if (held.get() != 0) {
                fail("the object was claimed for disposal with " + held.get() + " references held");
            }
        }
    }

    @Validate
    public void claimedOnlyWhenIdleAndNeverStranded() {
        while (handedOver.poll() != null) { // the remaining closes
            giveBack();
        }
        if (violation.get() != null) {
            throw new IllegalStateException(violation.get());
        }
        if (claims.get() > 1) {
            throw new IllegalStateException(claims.get() + " claims disposed one object");
        }
        if (claims.get() == 0 && !entry.tryDispose(DisposalCause.RELEASED)) {
            throw new IllegalStateException(
                    "nothing is held, yet the idle object cannot be claimed: count " + entry.count());
        }
        if (entry.count() >= 0) {
            throw new IllegalStateException("a claimed object's count went back to " + entry.count());
        }
    }

    @Test
    void revivalsIdlingHandOversAndClaimsInEveryInterleaving() {
        new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .iterations(30)
                .invocationsPerIteration(500)
                .check(EntryIdleLincheckTest.class);
    }
}
