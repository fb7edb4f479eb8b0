package io.refpool.core;

import static io.refpool.testkit.TestKit.BOUND;
import static io.refpool.testkit.TestKit.forkRun;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.refpool.core.TestResources.Resource;
import io.refpool.sync.CancellationSource;
import io.refpool.sync.CancellationToken;
import io.refpool.sync.Guard;
import io.refpool.sync.WaitInterruptedException;
import io.refpool.sync.WaitTimeoutException;
import io.refpool.testkit.TestKit;
import io.refpool.testkit.TestKit.Forked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A storm on {@link AttachMode#PER_OBJECT} sections under strict access: four threads use four
 * objects (at most three alive, an idle cache of two that expires) through every way in:
 * {@code call}, the two-key {@code call}, {@code callAsync} with cancellations racing it,
 * {@code Handle.section(Duration)} with timeouts that fire, {@code sectionAsync} with
 * cancellations, and {@code pool.stopTheWorld()}, while a fifth thread interrupts the others at
 * random. Then, at rest: no two threads were ever inside one object, no update inside one was
 * lost, every section is free, every permit no object holds is free, nothing failed that should
 * not have, and, once the pool closes, every object was disposed exactly once, attached. It runs on
 * platform threads, and on virtual threads on JDK 21+.
 */
class SectionStormTest {
    private static final List<String> KEYS = List.of("a", "b", "c", "d");
    private static final int THREADS = 4;
    private static final int OPERATIONS = 1_500;
    private static final int MAX_OBJECTS = 3;

    /** One object's view: how many threads are inside now, and its updates, plain and counted. */
    private static final class Inside {
        final AtomicInteger now = new AtomicInteger();
        long plain; // updated only inside the section: a lost update means two were inside
        final AtomicLong counted = new AtomicLong();
    }

    private final TestResources resources = new TestResources();
    private final Map<Resource, Inside> insides = new ConcurrentHashMap<>();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();

    @Test
    void onPlatformThreads() throws Exception {
        storm(null);
    }

    @Test
    void onVirtualThreads() throws Throwable {
        ExecutorService virtualThreads = TestKit.virtualThreadPerTaskExecutorOrNull();
        assumeTrue(virtualThreads != null, "virtual threads need JDK 21+");
        try {
            storm(virtualThreads);
        } finally {
            virtualThreads.shutdownNow();
        }
    }

    /** The storm on platform threads ({@code executor} null) or on the executor's threads. */
    private void storm(ExecutorService executor) throws Exception {
        RefPool<String, Resource> pool = resources.build(resources
                .builder()
                .attachMode(AttachMode.PER_OBJECT)
                .strictAccess(true)
                .maxObjects(MAX_OBJECTS)
                .idle(cache -> cache.maximumSize(2).expireAfterAccess(Duration.ofMillis(1))));
        Thread[] threads = new Thread[THREADS];
        CountDownLatch started = new CountDownLatch(THREADS);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            int id = i;
            Random random = new Random(7919L * i + 17);
            CompletableFuture<Void> finished = new CompletableFuture<>();
            workers.add(finished);
            Runnable body = () -> {
                threads[id] = Thread.currentThread(); // published to the interrupter by the latch
                started.countDown();
                for (int op = 0; op < OPERATIONS; op++) {
                    try {
                        operate(pool, random);
                    } catch (CapacityExhaustedException
                            | CancellationException
                            | WaitTimeoutException
                            | WaitInterruptedException e) {
                        refused.incrementAndGet(); // a full pool, a cancelled or timed-out wait, an interrupt
                    } catch (Throwable t) {
                        unexpected.add(t);
                    }
                    Thread.interrupted(); // an interrupt that landed outside a wait ends with the operation
                }
                finished.complete(null);
            };
            if (executor == null) {
                Thread thread = new Thread(body, "storm-" + i);
                thread.setDaemon(true);
                thread.start();
            } else {
                executor.execute(body);
            }
        }
        assertTrue(started.await(BOUND.toMillis(), TimeUnit.MILLISECONDS), "every storm thread started");
        AtomicBoolean storming = new AtomicBoolean(true);
        Forked<Void> interrupter = forkRun("interrupter", () -> {
            Random random = new Random(31);
            while (storming.get()) {
                threads[random.nextInt(THREADS)].interrupt();
                TimeUnit.MICROSECONDS.sleep(200 + random.nextInt(800)); // pacing only: the storm needs no timing
            }
        });
        for (int i = 0; i < THREADS; i++) {
            try {
                workers.get(i).get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("storm thread " + i + " is stuck: " + TestKit.describeStack(threads[i]));
            }
        }
        storming.set(false);
        interrupter.join();

        assertEquals(List.of(), List.copyOf(unexpected), "only refusals, cancellations and timeouts may fail");
        assertEquals(0, overlaps.get(), "two threads were inside one object at once");
        insides.forEach((resource, inside) ->
                assertEquals(inside.counted.get(), inside.plain, () -> resource + ": an update inside was lost"));
        assertTrue(
                completed.get() > THREADS * OPERATIONS / 4,
                "the storm must mostly get through, or it tests nothing: " + completed.get() + " completed, "
                        + refused.get() + " refused");

        for (String key : KEYS) { // a stranded section would never be granted again
            try {
                pool.callAsync(key, CancellationToken.none(), resource -> null)
                        .toCompletableFuture()
                        .get(5, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("at rest, callAsync(" + key + ") never settled: " + diagnose(pool, key), e);
            }
        }
        pool.flush();
        PoolStats stats = pool.stats();
        assertEquals(0, stats.live(), "every reference a section or a call took was given back");
        assertEquals(
                MAX_OBJECTS - stats.live() - stats.idle(),
                pool.core().readings().freePermitsNow(),
                () -> "every permit no object holds is free: " + stats);
        pool.close();
        resources.assertAllDisposedOnceAttached();
    }

    private static String diagnose(RefPool<String, Resource> pool, String key) {
        StringBuilder sb = new StringBuilder(pool.stats().toString());
        sb.append(", free permits ").append(pool.core().readings().freePermitsNow());
        try (Attachment attachment = pool.attach(Duration.ofSeconds(2))) {
            sb.append("; gate: free");
        } catch (WaitTimeoutException e) {
            sb.append("; gate: stranded (").append(e).append(')');
            return sb.toString();
        }
        Handle<Resource> handle;
        try {
            handle = pool.acquireAsync(key, Duration.ofSeconds(2))
                    .toCompletableFuture()
                    .join();
            sb.append("; capacity: granted");
        } catch (CompletionException | CancellationException e) {
            sb.append("; capacity: stranded (").append(e).append(')');
            return sb.toString();
        }
        try (Attachment attachment = pool.attach()) {
            Guard section = handle.section(Duration.ofSeconds(2));
            section.close();
            sb.append("; section: free");
        } catch (WaitTimeoutException e) {
            sb.append("; section: stranded (").append(e).append(')');
        } finally {
            pool.attached(() -> {
                handle.close();
                return null;
            });
        }
        return sb.toString();
    }

    /** One random operation; each takes and gives back whatever it needs, also when it fails. */
    private void operate(RefPool<String, Resource> pool, Random random) {
        String key = KEYS.get(random.nextInt(KEYS.size()));
        switch (random.nextInt(9)) {
            case 0, 1, 2 -> pool.call(key, this::use);
            case 3 ->
                pool.call(key, KEYS.get(random.nextInt(KEYS.size())), (first, second) -> {
                    use(first);
                    return second == first ? null : use(second);
                });
            case 4, 5 -> callAsync(pool, key, random);
            case 6 ->
                pool.attached(() -> {
                    Handle<Resource> handle = pool.acquire(key);
                    try {
                        Guard section = handle.section(Duration.ofNanos(1 + random.nextInt(200_000)));
                        try {
                            return use(handle.get());
                        } finally {
                            section.close();
                        }
                    } finally {
                        handle.close();
                    }
                });
            case 7 -> pool.attached(() -> exclusiveAsync(pool, key, random));
            default -> {
                Attachment world = pool.stopTheWorld();
                try {
                    pool.call(key, this::use);
                } finally {
                    world.close();
                }
            }
        }
    }

    /** {@code callAsync} with its token cancelled at once, after a moment, or never. */
    private void callAsync(RefPool<String, Resource> pool, String key, Random random) {
        CancellationSource source = new CancellationSource();
        CompletableFuture<Object> call =
                pool.callAsync(key, source.token(), this::use).toCompletableFuture();
        cancelMaybe(source, random);
        join(call, value -> {});
    }

    /** {@code sectionAsync} on an attached thread, its token cancelled at random; the object used if granted. */
    private Object exclusiveAsync(RefPool<String, Resource> pool, String key, Random random) {
        Handle<Resource> handle = pool.acquire(key);
        try {
            CancellationSource source = new CancellationSource();
            CompletableFuture<Guard> wait = handle.sectionAsync(source.token()).toCompletableFuture();
            cancelMaybe(source, random);
            Guard section = join(wait, Guard::close);
            try {
                return use(handle.get()); // granted to an async caller: any attached thread may use it
            } finally {
                section.close();
            }
        } finally {
            handle.close();
        }
    }

    private static void cancelMaybe(CancellationSource source, Random random) {
        switch (random.nextInt(3)) {
            case 0 -> source.cancel();
            case 1 -> {
                for (int spin = random.nextInt(2_000); spin > 0; spin--) {
                    Thread.onSpinWait();
                }
                source.cancel();
            }
            default -> {}
        }
    }

    /**
     * {@return the stage's value}, or throws its failure as it was, not wrapped; a hang fails the
     * test. Interrupted, it cancels the stage; if the stage had settled first (a timed {@code get}
     * checks the interrupt before the result), its value is given back with {@code giveBack}.
     */
    private static <T> T join(CompletableFuture<T> stage, Consumer<? super T> giveBack) {
        try {
            return stage.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new AssertionError("a stage failed with a checked exception", cause);
        } catch (InterruptedException e) {
            if (!stage.cancel(false) && !stage.isCompletedExceptionally()) { // settled first: ours to give back
                giveBack.accept(stage.join());
            }
            Thread.currentThread().interrupt();
            throw new WaitInterruptedException("a stage of the storm", e);
        } catch (TimeoutException e) {
            throw new AssertionError("a stage did not settle within " + BOUND, e);
        }
    }

    /** Enters the object as its only user, updates it, leaves; counts an overlap if it was not alone. */
    private Object use(Resource resource) {
        Inside inside = insides.computeIfAbsent(resource, r -> new Inside());
        if (inside.now.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        long seen = inside.plain;
        Thread.onSpinWait();
        inside.plain = seen + 1;
        inside.counted.incrementAndGet();
        inside.now.decrementAndGet();
        completed.incrementAndGet();
        return resource;
    }
}
