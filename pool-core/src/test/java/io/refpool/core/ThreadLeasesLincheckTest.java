package io.refpool.core;

import io.refpool.core.TestResources.Resource;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks thread leases with Lincheck, through a real {@code SHARED} pool whose threads lease
 * from their first acquire: each modelled thread borrows from its own lease (a request, or a handle
 * it keeps open), closes handles any thread opened, and revokes (invalidate, {@code clearIdle}, a
 * sweep run on the thread). After every explored interleaving, once every handle is closed, what is
 * pending applied and the pool closed, each object the factory made was disposed exactly once, never
 * under an open handle (the disposer checks the count the test keeps), and no release was applied
 * to a count that did not hold it.
 *
 * <p>The drainer is kept out of the model (its executor drops the task), so only the modelled
 * threads apply releases, and the sweeper's period is an hour: sweeps run only as operations.
 */
public class ThreadLeasesLincheckTest {
    private final TestResources resources = new TestResources();
    private final RefPool<String, Resource> pool = resources.build(resources
            .builder()
            .attachMode(AttachMode.SHARED)
            .threadLeases(Duration.ofHours(1))
            .drainDelay(Duration.ofHours(1))
            .drainThreshold(1)
            .executor(task -> {}));
    private final ConcurrentLinkedQueue<Handle<Resource>> open = new ConcurrentLinkedQueue<>();

    public ThreadLeasesLincheckTest() {
        pool.core().unwatchDrainsForTests();
        pool.core().leasesForTests().leaseAtOnce();
    }

    /** A request: attach, acquire (a borrow once the thread leases), use, close, detach. */
    @Operation
    public void request() {
        try (Attachment attached = pool.attach();
                Handle<Resource> handle = pool.acquire("k")) {
            handle.get().openHandles.incrementAndGet();
            handle.get().openHandles.decrementAndGet();
        }
    }

    /** Opens a handle and keeps it open, for any thread to close. */
    @Operation
    public void openOne() {
        try (Attachment attached = pool.attach()) {
            Handle<Resource> handle = pool.acquire("k");
            handle.get().openHandles.incrementAndGet();
            open.add(handle);
        }
    }

    /** Closes a handle some thread kept open, off the attachment: a give-back from any thread. */
    @Operation
    public void closeOne() {
        Handle<Resource> handle = open.poll();
        if (handle != null) {
            handle.get().openHandles.decrementAndGet();
            handle.close();
        }
    }

    @Operation
    public boolean invalidate() {
        return pool.invalidate("k");
    }

    @Operation
    public void clearIdle() {
        pool.clearIdle();
    }

    @Operation
    public void sweep() {
        pool.core().leasesForTests().sweep();
    }

    @Validate
    public void everyObjectDisposedOnceAndNeverUnderAHandle() {
        for (Handle<Resource> handle; (handle = open.poll()) != null; ) {
            handle.get().openHandles.decrementAndGet();
            handle.close();
        }
        pool.attach().close(); // applies what the closes left pending
        pool.close();
        check(resources.errors.isEmpty(), "errors: " + resources.errors);
        check(
                resources.disposalCount() == resources.createdCount(),
                resources.createdCount() + " made, " + resources.disposalCount() + " disposals");
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }

    @Test
    void leasesKeepEveryObjectDisposedOnceInEveryInterleaving() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(0)
                .iterations(10)
                .invocationsPerIteration(120)
                .check(getClass());
    }
}
