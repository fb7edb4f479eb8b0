package io.refpool.core;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks thread leases against the capacity bound with Lincheck: a {@code SHARED} pool of
 * one object ({@code maxObjects(1)}) whose threads lease from their first acquire, two keys, attached
 * requests (which end leases that lend nothing when short of capacity, or fail fast), {@code
 * acquireAsync} waiters in line (which end every lease), handles kept open and closed by any thread,
 * and sweeps. After every explored interleaving, once every handle is closed and what is pending
 * applied, no waiter is left in line (a lease kept the permit a waiter needed), and after the close
 * each object was disposed exactly once, never under an open handle.
 *
 * <p>The drainer is kept out of the model (its executor drops the task); the sweeper's period is an
 * hour: sweeps run only as operations.
 */
public class ThreadLeasesBoundedLincheckTest {
    private final TestResources resources = new TestResources();
    private final RefPool<String, Resource> pool = resources.build(resources
            .builder()
            .attachMode(AttachMode.SHARED)
            .maxObjects(1)
            .threadLeases(Duration.ofHours(1))
            .drainDelay(Duration.ofHours(1))
            .drainThreshold(1)
            .executor(task -> {}));
    private final ConcurrentLinkedQueue<Handle<Resource>> open = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CompletableFuture<Handle<Resource>>> waiting = new ConcurrentLinkedQueue<>();

    public ThreadLeasesBoundedLincheckTest() {
        pool.core().unwatchDrainsForTests();
        pool.core().leasesForTests().neverPause(); // else each waiter would stop leasing for the run
        warmUpMaps();
        pool.core().leasesForTests().leaseAtOnce();
    }

    /**
     * Makes the pool's maps (the slots, the line) set up their tables before the model runs: two
     * threads that meet in a map's first insert spin-wait for each other there, which the model
     * checker reports as a hang of the pool.
     */
    private void warmUpMaps() {
        Handle<Resource> a = pool.acquireAsync("a", CancellationToken.none())
                .toCompletableFuture()
                .join();
        CancellationSource cancel = new CancellationSource();
        CompletableFuture<Handle<Resource>> b =
                pool.acquireAsync("b", cancel.token()).toCompletableFuture();
        cancel.cancel(); // b leaves the line
        check(b.isCompletedExceptionally(), "b waited in line and left it");
        try (Attachment attached = pool.attach()) {
            a.close(); // a is disposed: no idle cache
        }
    }

    private void request(String key) {
        try (Attachment attached = pool.attach();
                Handle<Resource> handle = pool.acquire(key)) {
            handle.get().openHandles.incrementAndGet();
            handle.get().openHandles.decrementAndGet();
        } catch (CapacityExhaustedException busy) {
            // the one object is in use by a handle of the other key: an attached acquire fails fast
        }
    }

    /** A request on key {@code a}: attach, acquire (a borrow once the thread leases), use, close. */
    @Operation
    public void requestA() {
        request("a");
    }

    @Operation
    public void requestB() {
        request("b");
    }

    /** Opens a handle on {@code a} and keeps it open, for any thread to close. */
    @Operation
    public void openA() {
        try (Attachment attached = pool.attach()) {
            Handle<Resource> handle = pool.acquire("a");
            handle.get().openHandles.incrementAndGet();
            open.add(handle);
        } catch (CapacityExhaustedException busy) {
            // as in request
        }
    }

    /** Waits in line for {@code b}, detached; the handle is closed at the end. */
    @Operation
    public void waitForB() {
        waiting.add(pool.acquireAsync("b", CancellationToken.none()).toCompletableFuture());
    }

    /** Closes a handle some thread kept open, off the attachment. */
    @Operation
    public void closeOne() {
        Handle<Resource> handle = open.poll();
        if (handle != null) {
            handle.get().openHandles.decrementAndGet();
            handle.close();
        }
    }

    @Operation
    public void sweep() {
        pool.core().leasesForTests().sweep();
    }

    @Validate
    public void noWaiterStuckAndEveryObjectDisposedOnce() {
        List<CompletableFuture<Handle<Resource>>> waiters = new ArrayList<>(waiting);
        for (boolean progress = true; progress; ) {
            progress = false;
            for (Handle<Resource> handle; (handle = open.poll()) != null; ) {
                handle.get().openHandles.decrementAndGet();
                handle.close();
                progress = true;
            }
            pool.attach().close(); // applies what the closes left pending; a freed permit serves the line
            for (CompletableFuture<Handle<Resource>> waiter : waiters) {
                Handle<Resource> served = waiter.getNow(null);
                if (served != null && waiting.remove(waiter)) {
                    served.get().openHandles.incrementAndGet();
                    open.add(served);
                    progress = true;
                }
            }
        }
        check(waiting.isEmpty(), waiting.size() + " acquireAsync still in line with no handle open");
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
    void leasesNeverKeepAPermitTheLineNeeds() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(0)
                .iterations(4)
                .invocationsPerIteration(60)
                .check(getClass());
    }
}
