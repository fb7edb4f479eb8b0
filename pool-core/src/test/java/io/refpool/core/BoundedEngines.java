package io.refpool.core;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine objects of a scenario on a pool bounded to one object: a factory and a disposer that
 * record what the pool promises and every breach of it (a second object alive at once, a disposal
 * with a handle open, an object handed out after its disposal), checked after the scenario.
 *
 * <pre>{@code
 * BoundedEngines engines = new BoundedEngines();
 * RefPool<String, BoundedEngines.Engine> pool =
 *         RefPool.builder(engines::create).maxObjects(1).disposer(engines::dispose).build();
 * pool.run("a", engines::use);
 * pool.close();
 * engines.checkEachDisposedOnce();
 * }</pre>
 */
final class BoundedEngines {
    /** An engine object: how many handles use it right now, and how often it was disposed. */
    static final class Engine {
        final String key;
        final AtomicInteger users = new AtomicInteger();
        final AtomicInteger disposals = new AtomicInteger();

        Engine(String key) {
            this.key = key;
        }
    }

    private final List<Engine> created = new CopyOnWriteArrayList<>();
    private final Map<String, String> violations = new ConcurrentHashMap<>();
    private final AtomicInteger alive = new AtomicInteger();

    /** The factory: records the object, and a breach if another one is alive. */
    Engine create(String key) {
        if (alive.incrementAndGet() > 1) {
            violation("bound", "a second object was created while one existed (maxObjects 1)");
        }
        Engine engine = new Engine(key);
        created.add(engine);
        return engine;
    }

    /** The disposer: records the disposal, and a breach if a handle to the object is open. */
    void dispose(Engine engine) {
        if (engine.users.get() != 0) {
            violation("in use", "the object of '" + engine.key + "' was disposed with a handle open");
        }
        engine.disposals.incrementAndGet();
        alive.decrementAndGet();
    }

    /** Uses {@code engine} through an open handle, checking it was not disposed under it. */
    void use(Engine engine) {
        engine.users.incrementAndGet();
        if (engine.disposals.get() != 0) {
            violation("after", "the object of '" + engine.key + "' was handed out after its disposal");
        }
        engine.users.decrementAndGet();
    }

    /** Records a breach found elsewhere (the first of each kind is kept). */
    void violation(String kind, String description) {
        violations.putIfAbsent(kind, description);
    }

    /**
     * Once the pool is closed: throws if any breach was recorded, or an object was not disposed
     * exactly once.
     */
    void checkEachDisposedOnce() {
        if (!violations.isEmpty()) {
            throw new IllegalStateException(String.join("; ", violations.values()));
        }
        for (Engine engine : created) {
            if (engine.disposals.get() != 1) {
                throw new IllegalStateException("the object of '" + engine.key + "' was disposed "
                        + engine.disposals.get() + " times, not once");
            }
        }
    }
}
