package io.refpool.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Model-checks handles with Lincheck, through a real {@code SHARED} pool: threads share from two
 * handles to one object, close them (the same handle from several threads at once, attached or
 * off-attachment) and attach. A share answers 1 exactly when its source handle is open, as if each
 * operation were atomic; and after every explored interleaving, once all threads are done and one
 * final attach has applied what is pending, the object is disposed exactly when no handle to it is
 * open, never twice, and no release was applied to a count that did not hold it.
 *
 * <p>The drainer is kept out of the model (its executor drops the task, and no watch is armed
 * for it), so only the modelled threads apply releases.
 */
@Param(name = "handle", gen = IntGen.class, conf = "0:1")
public class HandleShareCloseLincheckTest {
    private final AtomicInteger disposals = new AtomicInteger();
    private final AtomicInteger errors = new AtomicInteger();
    private final RefPool<String, Object> pool = RefPool.builder((String key) -> new Object())
            .attachMode(AttachMode.SHARED)
            .disposer(value -> disposals.incrementAndGet())
            .errorListener(error -> errors.incrementAndGet())
            .drainDelay(Duration.ofHours(1))
            .drainThreshold(1)
            .executor(task -> {})
            .build();
    private final List<Handle<Object>> handles = new ArrayList<>();
    private final ConcurrentLinkedQueue<Handle<Object>> shares = new ConcurrentLinkedQueue<>();

    public HandleShareCloseLincheckTest() {
        pool.core().unwatchDrainsForTests(); // no timer armed from the modelled threads
        try (Attachment attached = pool.attach()) {
            Handle<Object> first = pool.acquire("k");
            handles.add(first);
            handles.add(first.share());
        }
    }

    /** {@return 1 if a new handle was opened from handle {@code i}, 0 if it was closed} */
    @Operation
    public int share(@Param(name = "handle") int i) {
        try {
            shares.add(handles.get(i).share());
            return 1;
        } catch (IllegalStateException closed) {
            return 0;
        }
    }

    /** Closes handle {@code i} on a thread that is not attached: the decrement is deferred. */
    @Operation
    public void closeDetached(@Param(name = "handle") int i) {
        handles.get(i).close();
    }

    /** Closes handle {@code i} attached: the decrement is applied at once. */
    @Operation
    public void closeAttached(@Param(name = "handle") int i) {
        try (Attachment attached = pool.attach()) {
            handles.get(i).close();
        }
    }

    /** Attaches and detaches, applying what is pending. */
    @Operation
    public void attach() {
        pool.attach().close();
    }

    @Validate
    public void disposedExactlyWhenNoHandleIsOpen() {
        pool.attach().close();
        long open = handles.stream().filter(Handle::isOpen).count()
                + shares.stream().filter(Handle::isOpen).count();
        check(errors.get() == 0, "a release was applied to a count that did not hold it");
        check(pool.stats().pendingDecrements() == 0, "a final attach left releases pending");
        check(
                disposals.get() == (open == 0 ? 1 : 0),
                "disposed " + disposals.get() + " time(s) with " + open + " handle(s) open");
        try (Attachment attached = pool.attach()) {
            handles.forEach(Handle::close);
            shares.forEach(Handle::close);
        }
        check(disposals.get() == 1, "disposed " + disposals.get() + " time(s) once every handle was closed");
        check(errors.get() == 0, "closing the remaining handles over-released");
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException(message);
        }
    }

    @Test
    void shareAndCloseKeepTheCountExactInEveryInterleaving() {
        new ModelCheckingOptions()
                .threads(2)
                .actorsPerThread(3)
                .actorsBefore(0)
                .actorsAfter(0)
                .iterations(4)
                .invocationsPerIteration(75)
                .check(getClass());
    }
}
