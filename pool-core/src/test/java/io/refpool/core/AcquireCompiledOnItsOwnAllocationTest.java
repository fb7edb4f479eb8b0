package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.refpool.core.TestResources.Resource;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * An attached acquire and close of a live key allocates nothing also where the JIT compiled {@code
 * pool.acquire} on its own first, as it does in a host that acquires from many places, with every
 * path of it taken: attached acquires of a pool without and of one with thread leases, and refused
 * ones (not attached, a closed pool). Two things made the handle escape there (40 bytes an acquire,
 * every run): the compiled acquire grew past the size above which C2 no longer inlines a compiled
 * method ({@code InlineSmallCode}), and a refused acquire's path returned into the same place as
 * the fast path's handle, which the JIT then cannot remove.
 *
 * <p>The acquires come from {@link #coldCaller}, which this test's JVM never compiles (the
 * allocation tests' {@code CompileCommand}, in the parent POM), so each of them is a call that
 * counts toward compiling {@code acquire} on its own, and its profile sees every path. In a JVM of
 * its own, as every allocation test.
 */
class AcquireCompiledOnItsOwnAllocationTest {
    private static final String KEPT_INTERPRETED =
            "-XX:CompileCommand=exclude," + AcquireCompiledOnItsOwnAllocationTest.class.getName() + "::coldCaller";

    @Test
    void anAcquireCompiledOnItsOwnWithEveryPathTakenIsStillInlinedAndItsHandleRemoved() throws Exception {
        assertTrue(
                ManagementFactory.getRuntimeMXBean().getInputArguments().contains(KEPT_INTERPRETED),
                "this test needs its JVM started with " + KEPT_INTERPRETED);
        TestResources plainResources = new TestResources();
        RefPool<String, Resource> plain =
                plainResources.build(plainResources.builder().drainDelay(Duration.ofHours(1)));
        TestResources leasedResources = new TestResources();
        RefPool<String, Resource> leased = leasedResources.build(leasedResources
                .builder()
                .attachMode(AttachMode.SHARED)
                .threadLeases(Duration.ofHours(1))
                .drainDelay(Duration.ofHours(1)));
        RefPool<String, Resource> closed = new TestResources().pool(AttachMode.PER_OBJECT);
        closed.close();
        for (int round = 0; round < 4; round++) {
            coldCaller(plain, true, 20_000);
            coldCaller(leased, true, 20_000);
            coldCaller(plain, false, 2_000);
            coldCaller(closed, false, 2_000);
        }
        LiveAcquireAllocation.assertNothingAllocatedInEveryMode("after acquire was compiled on its own");
        plain.close();
        leased.close();
        plainResources.assertAllDisposedOnceAttached();
        leasedResources.assertAllDisposedOnceAttached();
    }

    /** {@code n} acquires of eight keys, attached or refused (not attached, or a closed pool). */
    static void coldCaller(RefPool<String, Resource> pool, boolean attach, int n) {
        for (int i = 0; i < n; i++) {
            String key = "cold-" + (i & 7);
            if (attach) {
                try (Attachment attached = pool.attach();
                        Handle<Resource> handle = pool.acquire(key)) {
                    handle.get();
                }
            } else {
                try (Handle<Resource> handle = pool.acquire(key)) {
                    fail("acquire(" + key + ") was not refused: " + handle);
                } catch (IllegalStateException refused) {
                    // not attached, or the pool is closed (a PoolClosedException)
                }
            }
        }
    }
}
