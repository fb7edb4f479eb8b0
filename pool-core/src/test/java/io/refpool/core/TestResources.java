package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Objects for a test pool that remember their disposals: the factory makes a {@link Resource} for
 * a key and records it, the disposer counts each disposal and notes whether it ran attached. A
 * test then checks "disposed exactly once" object by object, and every listener error is kept. A
 * test that counts its open handles in {@link Resource#openHandles} also gets "never disposed while
 * a handle is open" checked: the disposer throws, and the pool reports that to the listener.
 */
final class TestResources {
    /** A pooled object: its key and what happened to it. */
    static final class Resource {
        final String key;
        final AtomicInteger disposals = new AtomicInteger();
        /** Handles a test holds open on this object, if it keeps count; a disposal sees zero. */
        final AtomicInteger openHandles = new AtomicInteger();

        volatile boolean disposedAttached;
        volatile Thread disposedOn;

        Resource(String key) {
            this.key = key;
        }

        @Override
        public String toString() {
            return "Resource[" + key + ", disposals=" + disposals.get() + "]";
        }
    }

    private final ConcurrentHashMap<String, Resource> latest = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Resource> created = new ConcurrentLinkedQueue<>();
    private final AtomicInteger disposals = new AtomicInteger();
    final List<PoolError> errors = new CopyOnWriteArrayList<>();
    private volatile RefPool<String, Resource> pool;
    private volatile Consumer<Resource> alsoOnDispose = resource -> {};

    /** {@return a builder whose factory, disposer and error listener report to this object} */
    RefPool.Builder<String, Resource> builder() {
        return RefPool.builder(this::create).disposer(this::dispose).errorListener(errors::add);
    }

    /** {@return {@code builder}'s pool, remembered so the disposer can ask whether it runs attached} */
    RefPool<String, Resource> build(RefPool.Builder<String, Resource> builder) {
        RefPool<String, Resource> built = builder.build();
        pool = built;
        return built;
    }

    /** {@return a pool in {@code mode} with the defaults otherwise} */
    RefPool<String, Resource> pool(AttachMode mode) {
        return build(builder().attachMode(mode));
    }

    private Resource create(String key) {
        Resource resource = new Resource(key);
        latest.put(key, resource);
        created.add(resource);
        return resource;
    }

    private void dispose(Resource resource) {
        int open = resource.openHandles.get();
        if (open != 0) {
            throw new AssertionError(resource + " was disposed with " + open + " handle(s) open");
        }
        RefPool<String, Resource> p = pool;
        resource.disposedAttached = p != null && p.isAttached();
        resource.disposedOn = Thread.currentThread();
        resource.disposals.incrementAndGet();
        disposals.incrementAndGet();
        alsoOnDispose.accept(resource);
    }

    /** Runs {@code action} in the disposer, after the disposal is recorded (a disposer with effects). */
    void alsoOnDispose(Consumer<Resource> action) {
        alsoOnDispose = action;
    }

    /** {@return the object last created for {@code key}, or {@code null}} */
    Resource created(String key) {
        return latest.get(key);
    }

    /** {@return how many objects the factory made} */
    int createdCount() {
        return created.size();
    }

    /** {@return how many disposals ran, all objects together} */
    int disposalCount() {
        return disposals.get();
    }

    /** Asserts that every object created was disposed exactly once, attached, and nothing failed. */
    void assertAllDisposedOnceAttached() {
        assertEquals(List.of(), errors, "no error reached the listener");
        for (Resource resource : created) {
            assertEquals(1, resource.disposals.get(), () -> resource + " was not disposed exactly once");
            assertTrue(resource.disposedAttached, () -> resource + " was disposed on a detached thread");
        }
        assertEquals(created.size(), disposals.get(), "disposals, all objects together");
    }
}
