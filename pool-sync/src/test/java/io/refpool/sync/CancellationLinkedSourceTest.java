package io.refpool.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** How a source made by {@code linkedTo} follows its parents, and how it lets go of them. */
class CancellationLinkedSourceTest {

    @Test
    void childIsCancelledWhenAnyParentIs() {
        CancellationSource first = new CancellationSource();
        CancellationSource second = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(first.token(), second.token());
        AtomicReference<Thread> childCallbackThread = new AtomicReference<>();
        child.token().register(() -> childCallbackThread.set(Thread.currentThread()));

        assertTrue(second.cancel());

        assertTrue(child.isCancellationRequested());
        assertSame(Thread.currentThread(), childCallbackThread.get());
        assertFalse(first.isCancellationRequested());
    }

    @Test
    void childOfAnAlreadyCancelledParentStartsCancelled() {
        CancellationSource live = new CancellationSource();
        CancellationSource cancelled = new CancellationSource();
        cancelled.cancel();

        CancellationSource child = CancellationSource.linkedTo(cancelled.token(), live.token());

        assertTrue(child.isCancellationRequested());
        assertEquals(0, live.registrationCount(), "a cancelled child needs no link to the other parent");
    }

    @Test
    void cancellingTheChildLeavesTheParentsAloneAndDetachesFromThem() {
        CancellationSource parent = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(parent.token());
        assertEquals(1, parent.registrationCount());

        child.cancel();

        assertFalse(parent.isCancellationRequested());
        assertEquals(0, parent.registrationCount());
    }

    @Test
    void closingTheChildDetachesItFromEveryParent() {
        CancellationSource first = new CancellationSource();
        CancellationSource second = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(first.token(), second.token());
        assertEquals(1, first.registrationCount());
        assertEquals(1, second.registrationCount());

        child.close();

        assertEquals(0, first.registrationCount());
        assertEquals(0, second.registrationCount());
        first.cancel();
        assertFalse(child.isCancellationRequested(), "a closed child no longer follows its parents");
        child.close();
    }

    @Test
    void tenThousandClosedChildrenLeaveNothingOnTheParent() {
        CancellationSource parent = new CancellationSource();

        for (int i = 0; i < 10_000; i++) {
            CancellationSource child = CancellationSource.linkedTo(parent.token());
            assertEquals(1, parent.registrationCount());
            child.close();
        }

        assertEquals(0, parent.registrationCount());
        assertTrue(
                parent.linkedNodeCount() <= CancellationSource.MIN_SWEEP_BACKLOG,
                "unregistered links must be unlinked, found " + parent.linkedNodeCount());
    }

    @Test
    void childrenClosedInAnyOrderAreUnlinkedFromTheParent() {
        CancellationSource parent = new CancellationSource();
        List<CancellationSource> children = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            children.add(CancellationSource.linkedTo(parent.token()));
        }
        assertEquals(10_000, parent.registrationCount());

        for (CancellationSource child : children) {
            child.close();
        }

        assertEquals(0, parent.registrationCount());
        assertTrue(
                parent.linkedNodeCount() <= CancellationSource.MIN_SWEEP_BACKLOG,
                "unregistered links must be unlinked, found " + parent.linkedNodeCount());
    }

    @Test
    void exceptionOfAChildCallbackReachesTheParentsCancel() {
        CancellationSource parent = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(parent.token());
        IllegalStateException thrown = new IllegalStateException("child callback");
        child.token().register(() -> {
            throw thrown;
        });

        IllegalStateException caught = assertThrows(IllegalStateException.class, parent::cancel);

        assertSame(thrown, caught);
        assertTrue(child.isCancellationRequested());
    }

    @Test
    void checkedFailureOfAChildReachesTheParentsCancelWithEveryOtherFailureSuppressed() {
        CancellationSource parent = new CancellationSource();
        IllegalArgumentException parentFailure = new IllegalArgumentException("parent callback, runs after the link");
        parent.token().register(() -> {
            throw parentFailure;
        });
        CancellationSource child = CancellationSource.linkedTo(parent.token());
        OutOfMemoryError childError = new OutOfMemoryError("child callback, runs second");
        IOException childChecked = new IOException("child callback, runs first");
        child.token().register(() -> {
            throw childError;
        });
        child.token().register(() -> sneakyThrow(childChecked));

        UndeclaredThrowableException caught = assertThrows(UndeclaredThrowableException.class, parent::cancel);

        assertSame(childChecked, caught.getCause());
        assertArrayEquals(new Throwable[] {childError, parentFailure}, caught.getSuppressed());
        assertTrue(child.isCancellationRequested());
    }

    @Test
    void noneParentsAreNotLinkedAndNoParentsMeansAPlainSource() {
        CancellationSource child = CancellationSource.linkedTo(CancellationToken.none());
        CancellationSource orphan = CancellationSource.linkedTo();

        assertFalse(child.isCancellationRequested());
        assertTrue(child.cancel());
        assertTrue(orphan.cancel());
    }

    @Test
    void grandchildFollowsTheGrandparent() {
        CancellationSource root = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(root.token());
        CancellationSource grandchild = CancellationSource.linkedTo(child.token());

        root.cancel();

        assertTrue(grandchild.isCancellationRequested());
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneakyThrow(Throwable failure) throws T {
        throw (T) failure;
    }
}
