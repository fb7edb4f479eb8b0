package io.refpool.core;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.refpool.core.internal.PoolReadings;
import io.refpool.core.internal.PoolTimings;
import io.refpool.core.internal.PoolTimings.Timing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Binds a pool's statistics to a Micrometer {@link MeterRegistry}, every meter tagged with the
 * pool's {@linkplain RefPool.Builder#name name}.
 *
 * <pre>{@code
 * RefPool<String, Session> sessions = RefPool.builder(engine::open).name("sessions").build();
 * new RefPoolMetrics(sessions, Tags.of("service", "plugins")).bindTo(registry);
 * // refpool.objects{pool=sessions,state=live}, refpool.disposals{pool=sessions,cause=EXPIRED}, ...
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code refpool.objects}</td><td>gauge</td><td>{@code state=live|idle}</td>
 *       <td>objects with a reference; objects at count 0, not yet disposed</td></tr>
 *   <tr><td>{@code refpool.pending.releases}</td><td>gauge</td><td></td>
 *       <td>releases enqueued off-attachment and not yet applied</td></tr>
 *   <tr><td>{@code refpool.capacity.waiters}</td><td>gauge</td><td></td>
 *       <td>{@code acquireAsync} calls in line for capacity</td></tr>
 *   <tr><td>{@code refpool.creations}</td><td>function counter</td><td></td>
 *       <td>objects the factory created</td></tr>
 *   <tr><td>{@code refpool.disposals}</td><td>function counter</td><td>{@code cause}, one per
 *       {@link DisposalCause}</td><td>objects disposed</td></tr>
 *   <tr><td>{@code refpool.idle.hits}</td><td>function counter</td><td></td>
 *       <td>acquires served by an idle object instead of the factory</td></tr>
 *   <tr><td>{@code refpool.drains}</td><td>function counter</td><td></td>
 *       <td>batches of deferred releases applied</td></tr>
 *   <tr><td>{@code refpool.leaks}</td><td>function counter</td><td></td>
 *       <td>handles found unreachable while open</td></tr>
 *   <tr><td>{@code refpool.timeouts}</td><td>function counter</td><td></td>
 *       <td>waits the pool ended with a {@code WaitTimeoutException} (object, gate, section)</td></tr>
 *   <tr><td>{@code refpool.held.too.long}</td><td>function counter</td><td></td>
 *       <td>handles and calls reported open past {@link RefPool.Builder#heldTooLong}</td></tr>
 *   <tr><td>{@code refpool.wait}</td><td>timer</td><td>{@code resource=object|section}</td>
 *       <td>acquires until the handle is returned (a creation waited for included; for a call,
 *       until its function starts, less the section wait); waits for an object's section</td></tr>
 *   <tr><td>{@code refpool.use}</td><td>timer</td><td></td>
 *       <td>a call's function, or a handle from acquire to close</td></tr>
 *   <tr><td>{@code refpool.creation}</td><td>timer</td><td></td>
 *       <td>the factory, for the objects it returned</td></tr>
 * </table>
 *
 * <p>The timers are registered only for a pool built with
 * {@link RefPool.Builder#recordTimings recordTimings(true)}; a pool without it reads no clock for
 * them. Binding one {@code RefPoolMetrics} to a registry it is bound to already does nothing, so
 * each duration is recorded once per registry.
 *
 * <p>A registry keeps one meter per name and tags, so two pools of one name cannot share a
 * registry: {@link #bindTo} refuses, with {@link IllegalStateException}, a registry that holds a
 * meter of this name and tags, as its filters map them, that another binding registered (without
 * the check the registry would hand back the other pool's meter, and this pool would go unreported,
 * or its durations would mix with the other pool's). The refused binding registers nothing.
 * A filter that drops the {@code pool} tag makes every pool's meters one: give each its own
 * registry, or keep the tag. To replace a pool by
 * a new one of the same name, {@linkplain #close() close} the old pool's {@code RefPoolMetrics}
 * first: that removes its meters from every registry it was bound to.
 *
 * <p>Reading a meter costs a few striped-counter sums and never walks the pool's keys: the live
 * and idle gauges come from event counters (every object reaches count 0 once per idle spell and
 * leaves it by a revive or by its disposal), not from a scan as {@link RefPool#stats()} does. While
 * the pool is busy the two may differ by the transitions in flight; when it is quiet they agree.
 *
 * <p>Micrometer is an optional dependency of pool-core: a pool works without it on the class or
 * module path, and only this class needs it. The meters hold the pool weakly, as Micrometer's
 * gauges do; a closed pool keeps reporting its final counts until it is collected, or until its
 * {@code RefPoolMetrics} is closed.
 */
// Micrometer is an optional requirement of this module, not a transitive one: a user of this class
// requires micrometer.core itself (see module-info)
@SuppressWarnings("exports")
public final class RefPoolMetrics implements MeterBinder, AutoCloseable {
    private final PoolReadings core;
    /** Where the pool sends its durations, or {@code null}: it records none. */
    private final PoolTimings timings;

    private final Tags tags;

    /**
     * Held by every binding of every pool from its read of the registry's meters to its last
     * registration, and by every unbinding: two pools of one name bound at once to one registry
     * would each read it before the other registered, and neither would be refused.
     */
    private static final Object BINDING = new Object();

    /** What each registry bound got: its meters, and the recorder of its timers or {@code null}; guarded by this. */
    private final Map<MeterRegistry, Binding> bindings = new IdentityHashMap<>();

    /** Meters of this binding that a registry refused to remove: its own, should it bind there again. */
    private final Map<MeterRegistry, Set<Meter>> leftovers = new IdentityHashMap<>();

    private record Binding(List<Meter> meters, PoolTimings.Recorder recorder) {}

    /**
     * Metrics of {@code pool}, tagged {@code pool=<name>}.
     *
     * @param pool the pool
     * @throws NullPointerException if {@code pool} is null
     */
    public RefPoolMetrics(RefPool<?, ?> pool) {
        this(pool, Tags.empty());
    }

    /**
     * Metrics of {@code pool}, tagged {@code pool=<name>} and with {@code extraTags}.
     *
     * @param pool the pool
     * @param extraTags more tags for every meter
     * @throws NullPointerException if either argument is null
     */
    public RefPoolMetrics(RefPool<?, ?> pool, Iterable<Tag> extraTags) {
        RefPool<?, ?> checked = Objects.requireNonNull(pool, "pool");
        this.core = checked.core().readings();
        this.timings = checked.core().timings();
        this.tags = Tags.of(Objects.requireNonNull(extraTags, "extraTags"))
                .and("pool", checked.core().name());
    }

    /**
     * Registers the pool's meters in {@code registry}; nothing if this is bound to it already.
     *
     * @param registry the registry
     * @throws NullPointerException if {@code registry} is null
     * @throws IllegalStateException if {@code registry} (or, for a composite registry, a registry
     *     it holds) holds a meter of this name and tags that another binding registered (a pool of
     *     the same name); nothing is registered then
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (bindings.containsKey(registry)) {
            return;
        }
        synchronized (BINDING) { // the registry's meters read before and registered after, by one binding at a time
            Registration registration =
                    new Registration(registry, leftovers.getOrDefault(registry, Collections.emptySet()));
            PoolTimings.Recorder recorder;
            try {
                registerAll(registration);
                recorder = timings == null ? null : bindTimers(registration);
            } catch (RuntimeException | Error e) {
                removeAll(registry, registration.meters, e);
                throw e;
            }
            leftovers.remove(registry);
            bindings.put(registry, new Binding(registration.meters, recorder));
        }
    }

    /**
     * Removes the meters this registered from every registry it is bound to, and stops recording
     * the pool's durations for them; a later {@link #bindTo} registers them again. The pool itself
     * is not closed. A registry whose {@code remove} throws holds back no other: every registry is
     * unbound, and the first failure is thrown, the later ones suppressed on it; the meters it kept
     * are this binding's again should it bind to that registry once more.
     */
    @Override
    public synchronized void close() {
        Throwable failure = null;
        synchronized (BINDING) {
            for (Map.Entry<MeterRegistry, Binding> bound : bindings.entrySet()) {
                Binding binding = bound.getValue();
                if (binding.recorder() != null) {
                    timings.remove(binding.recorder());
                }
                failure = removeAll(bound.getKey(), binding.meters(), failure);
            }
            bindings.clear();
        }
        if (failure instanceof RuntimeException unchecked) {
            throw unchecked;
        } else if (failure != null) {
            throw (Error) failure;
        }
    }

    /**
     * Removes {@code meters} from {@code registry}, each whatever the others do; a meter the
     * registry refuses to remove is remembered as this binding's, for a later {@link #bindTo}.
     *
     * @return {@code failure}, or the first failure of a removal if it is {@code null}, with the
     *     later ones suppressed on it
     */
    private Throwable removeAll(MeterRegistry registry, List<Meter> meters, Throwable failure) {
        for (Meter meter : meters) {
            try {
                registry.remove(meter);
            } catch (RuntimeException | Error e) {
                leftovers
                        .computeIfAbsent(registry, r -> Collections.newSetFromMap(new IdentityHashMap<>()))
                        .add(meter);
                if (failure == null) {
                    failure = e;
                } else if (failure != e) {
                    failure.addSuppressed(e);
                }
            }
        }
        return failure;
    }

    private void registerAll(Registration registration) {
        gauge(
                registration,
                "refpool.objects",
                "objects with a reference",
                PoolReadings::liveNow,
                Tags.of("state", "live"));
        gauge(
                registration,
                "refpool.objects",
                "objects at count 0, not yet disposed",
                PoolReadings::idleNow,
                Tags.of("state", "idle"));
        gauge(
                registration,
                "refpool.pending.releases",
                "releases enqueued and not yet applied",
                PoolReadings::pendingNow,
                Tags.empty());
        gauge(
                registration,
                "refpool.capacity.waiters",
                "acquires in line for capacity",
                PoolReadings::capacityWaitersNow,
                Tags.empty());
        counter(
                registration,
                "refpool.creations",
                "objects the factory created",
                PoolReadings::creations,
                Tags.empty());
        for (DisposalCause cause : DisposalCause.values()) {
            counter(
                    registration,
                    "refpool.disposals",
                    "objects disposed",
                    c -> c.disposals(cause),
                    Tags.of("cause", cause.name()));
        }
        counter(
                registration,
                "refpool.idle.hits",
                "acquires served by an idle object",
                PoolReadings::idleHits,
                Tags.empty());
        counter(
                registration,
                "refpool.drains",
                "batches of deferred releases applied",
                PoolReadings::drains,
                Tags.empty());
        counter(
                registration,
                "refpool.leaks",
                "handles found unreachable while open",
                PoolReadings::leaks,
                Tags.empty());
        counter(
                registration,
                "refpool.timeouts",
                "waits the pool ended with a timeout",
                PoolReadings::timeouts,
                Tags.empty());
        counter(
                registration,
                "refpool.held.too.long",
                "handles and calls reported open past the held-too-long threshold",
                PoolReadings::heldTooLong,
                Tags.empty());
    }

    private PoolTimings.Recorder bindTimers(Registration registration) {
        EnumMap<Timing, Timer> timers = new EnumMap<>(Timing.class);
        timers.put(
                Timing.OBJECT_WAIT,
                timer(registration, "refpool.wait", "waits for an object", Tags.of("resource", "object")));
        timers.put(
                Timing.SECTION_WAIT,
                timer(registration, "refpool.wait", "waits for an object's section", Tags.of("resource", "section")));
        timers.put(
                Timing.USE,
                timer(registration, "refpool.use", "calls' functions and handles' lifetimes", Tags.empty()));
        timers.put(
                Timing.CREATION, timer(registration, "refpool.creation", "factory calls that returned", Tags.empty()));
        PoolTimings.Recorder recorder = (timing, nanos) -> timers.get(timing).record(nanos, TimeUnit.NANOSECONDS);
        timings.add(recorder);
        return recorder;
    }

    private Timer timer(Registration registration, String name, String description, Tags more) {
        Tags all = tags.and(more);
        return registration.add(
                name,
                all,
                () -> Timer.builder(name).description(description).tags(all).register(registration.registry));
    }

    private void gauge(Registration registration, String name, String description, ToLong reading, Tags more) {
        Tags all = tags.and(more);
        registration.add(name, all, () -> Gauge.builder(name, core, asDouble(reading))
                .description(description)
                .tags(all)
                .register(registration.registry));
    }

    private void counter(Registration registration, String name, String description, ToLong reading, Tags more) {
        Tags all = tags.and(more);
        registration.add(name, all, () -> FunctionCounter.builder(name, core, asDouble(reading))
                .description(description)
                .tags(all)
                .register(registration.registry));
    }

    /**
     * One {@link #bindTo}: the meters it registered, to take back if it fails, and the meters the
     * registry held before it, by identity. A registry hands back the meter it holds under the id a
     * new one maps to, after its filters (which may rename or retag it), so a meter handed back that
     * was there before is another binding's (a pool of the same name) and would report that pool,
     * or mix its durations with this one's.
     */
    private static final class Registration {
        final MeterRegistry registry;
        final List<Meter> meters = new ArrayList<>();
        private final Set<Meter> before = Collections.newSetFromMap(new IdentityHashMap<>());

        /**
         * The names and tags of the meters a composite registry's registries held before: a
         * composite hands back a meter of its own, and its registries the meter they hold under
         * that name and tags, so such a meter is refused before it is registered.
         */
        private final Set<List<Object>> beforeBelow = new HashSet<>();

        /** {@code own}: meters of this binding the registry refused to remove before, not another's. */
        Registration(MeterRegistry registry, Set<Meter> own) {
            this.registry = registry;
            before.addAll(registry.getMeters());
            before.removeAll(own);
            if (registry instanceof CompositeMeterRegistry composite) {
                addMetersBelow(composite);
                for (Meter meter : own) {
                    beforeBelow.remove(
                            idOf(meter.getId().getName(), meter.getId().getTags()));
                }
            }
        }

        private void addMetersBelow(CompositeMeterRegistry composite) {
            for (MeterRegistry below : composite.getRegistries()) {
                for (Meter meter : below.getMeters()) {
                    beforeBelow.add(idOf(meter.getId().getName(), meter.getId().getTags()));
                }
                if (below instanceof CompositeMeterRegistry nested) {
                    addMetersBelow(nested);
                }
            }
        }

        /** Who else may have bound the meter, in both refusals. */
        private static final String ANOTHER_BINDING = ": a pool of the same name is bound to it, or this"
                + " RefPoolMetrics is, through a composite registry that holds this one or one this composite"
                + " holds (close that binding first, bind once, or name the pools apart)";

        private static List<Object> idOf(String name, Iterable<Tag> tags) {
            List<Tag> sorted = new ArrayList<>();
            tags.forEach(sorted::add);
            sorted.sort(null); // tags compare by key
            return List.of(name, sorted);
        }

        <M extends Meter> M add(String name, Tags all, Supplier<M> registration) {
            if (beforeBelow.contains(idOf(name, all))) {
                throw new IllegalStateException("a registry of the composite registry holds the meter " + name + all
                        + " of another binding" + ANOTHER_BINDING);
            }
            M registered = registration.get();
            if (before.contains(registered)) {
                throw new IllegalStateException("the registry already holds the meter " + name + all + " (as "
                        + registered.getId().getName() + registered.getId().getTags()
                        + " after its filters) of another binding" + ANOTHER_BINDING);
            }
            meters.add(registered);
            return registered;
        }
    }

    private static ToDoubleFunction<PoolReadings> asDouble(ToLong reading) {
        return c -> reading.applyAsLong(c);
    }

    /** One reading of the pool. */
    @FunctionalInterface
    private interface ToLong {
        long applyAsLong(PoolReadings readings);
    }
}
