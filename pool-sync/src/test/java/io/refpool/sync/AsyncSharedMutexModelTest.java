package io.refpool.sync;

import static io.refpool.sync.SharedMutexTesting.assertFree;
import static io.refpool.sync.SharedMutexTesting.granted;
import static io.refpool.sync.SharedMutexTesting.guardOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link AsyncSharedMutex} driven by one thread through long random sequences of acquires, tries,
 * releases and cancellations, compared after every step with a small reference model of the policy
 * (writer preference, FIFO, batch admission, re-admission on cancel, the reader ceiling). With one
 * thread every grant happens inside the call that caused it, so the comparison is exact.
 */
class AsyncSharedMutexModelTest {
    private static final int STEPS = 20_000;

    /** The policy as a plain sequential program, written apart from the implementation. */
    private static final class Model {
        final int maxReaders;
        int readers;
        boolean writer;
        final LinkedHashSet<Integer> queue = new LinkedHashSet<>();
        final Map<Integer, Boolean> isWriter = new HashMap<>();
        final List<Integer> grantOrder = new ArrayList<>();

        Model(int maxReaders) {
            this.maxReaders = maxReaders;
        }

        boolean fits(boolean w) {
            return !writer && (w ? readers == 0 : readers < maxReaders);
        }

        void take(boolean w) {
            if (w) {
                writer = true;
            } else {
                readers++;
            }
        }

        /** {@return "granted", "queued" or "refused"} */
        String acquire(int id, boolean w) {
            isWriter.put(id, w);
            if (queue.isEmpty() && fits(w)) {
                take(w);
                grantOrder.add(id);
                return "granted";
            }
            if (!w && queue.isEmpty() && !writer) {
                return "refused"; // only the ceiling holds this reader back
            }
            queue.add(id);
            return "queued";
        }

        boolean tryTake(boolean w) {
            if (queue.isEmpty() && fits(w)) {
                take(w);
                return true;
            }
            return false;
        }

        void release(boolean w) {
            if (w) {
                writer = false;
            } else {
                readers--;
            }
            admit();
        }

        void cancel(int id) {
            queue.remove(id);
            admit();
        }

        void admit() {
            while (!queue.isEmpty() && fits(isWriter.get(queue.iterator().next()))) {
                int id = queue.iterator().next();
                queue.remove(id);
                take(isWriter.get(id));
                grantOrder.add(id);
            }
        }
    }

    @ParameterizedTest(name = "maxReaders={0}")
    @ValueSource(ints = {1, 2, 3, 5, AsyncSharedMutex.MAX_READERS})
    void followsTheReferenceModelOverRandomSequences(int maxReaders) {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        String context = "seed " + seed + ", maxReaders " + maxReaders;

        AsyncSharedMutex lock = new AsyncSharedMutex(maxReaders);
        Model model = new Model(maxReaders);
        Map<Integer, CompletionStage<Guard>> pending = new HashMap<>();
        List<Integer> actualGrantOrder = new ArrayList<>();
        List<Guard> heldGuards = new ArrayList<>();
        List<Boolean> heldGuardIsWriter = new ArrayList<>();
        int rawReaders = 0;
        boolean rawWriter = false;
        int nextId = 0;
        int checkedGrants = 0;
        Map<String, Integer> outcomes = new HashMap<>();

        for (int step = 0; step < STEPS; step++) {
            String where = context + ", step " + step;
            int op = random.nextInt(100);
            if (op < 22) {
                int id = nextId++;
                String expected = model.acquire(id, false);
                outcomes.merge(expected, 1, Integer::sum);
                if (expected.equals("refused")) { // an async acquire is refused through its stage
                    CompletableFuture<Guard> refused = lock.acquireShared().toCompletableFuture();
                    assertInstanceOf(
                            IllegalStateException.class,
                            assertThrows(CompletionException.class, refused::join, where)
                                    .getCause(),
                            where);
                } else {
                    CompletionStage<Guard> stage = lock.acquireShared();
                    stage.thenRun(() -> actualGrantOrder.add(id));
                    pending.put(id, stage);
                    assertEquals(expected.equals("granted"), granted(stage), where);
                }
            } else if (op < 30) {
                int id = nextId++;
                String expected = model.acquire(id, true);
                outcomes.merge("writer " + expected, 1, Integer::sum);
                CompletionStage<Guard> stage = lock.acquire();
                stage.thenRun(() -> actualGrantOrder.add(id));
                pending.put(id, stage);
                assertEquals(expected.equals("granted"), granted(stage), where);
            } else if (op < 36) {
                boolean expected = model.tryTake(false);
                assertEquals(expected, lock.tryLockShared(), where);
                if (expected) {
                    rawReaders++;
                }
            } else if (op < 38) {
                boolean expected = model.tryTake(true);
                assertEquals(expected, lock.tryLock(), where);
                if (expected) {
                    rawWriter = true;
                }
            } else if (op < 90) {
                // release: a granted acquire's guard, or a raw hold
                collectGranted(pending, model, heldGuards, heldGuardIsWriter);
                int choices = heldGuards.size() + rawReaders + (rawWriter ? 1 : 0);
                if (choices == 0) {
                    continue;
                }
                int pick = random.nextInt(choices);
                if (pick < heldGuards.size()) {
                    Guard g = heldGuards.remove(pick);
                    boolean w = heldGuardIsWriter.remove(pick);
                    model.release(w);
                    g.close();
                } else if (pick < heldGuards.size() + rawReaders) {
                    rawReaders--;
                    model.release(false);
                    lock.unlockShared();
                } else {
                    rawWriter = false;
                    model.release(true);
                    lock.unlock();
                }
            } else {
                // cancel a queued acquire through its future
                if (model.queue.isEmpty()) {
                    continue;
                }
                int id = model.queue.stream()
                        .skip(random.nextInt(model.queue.size()))
                        .findFirst()
                        .orElseThrow();
                outcomes.merge("cancel", 1, Integer::sum);
                model.cancel(id);
                boolean cancelled = pending.remove(id).toCompletableFuture().cancel(true);
                assertEquals(true, cancelled, where);
            }
            collectGranted(pending, model, heldGuards, heldGuardIsWriter);
            assertEquals(model.readers, lock.readers(), where);
            assertEquals(model.writer, lock.isWriteLocked(), where);
            assertEquals(model.queue.size(), lock.queueLength(), where);
            for (Map.Entry<Integer, CompletionStage<Guard>> e : pending.entrySet()) {
                assertEquals(false, granted(e.getValue()), where + ", acquire " + e.getKey());
            }
            assertEquals(model.grantOrder.size(), actualGrantOrder.size(), where);
            for (; checkedGrants < actualGrantOrder.size(); checkedGrants++) {
                assertEquals(model.grantOrder.get(checkedGrants), actualGrantOrder.get(checkedGrants), where);
            }
        }

        // the sequence must have exercised queueing, re-admission and (below the default) the ceiling
        assertTrue(outcomes.getOrDefault("queued", 0) > 0 && outcomes.getOrDefault("cancel", 0) > 0, context);
        assertTrue(maxReaders == AsyncSharedMutex.MAX_READERS || outcomes.getOrDefault("refused", 0) > 0, context);
        // drain: cancel every waiter, release every holder
        while (!model.queue.isEmpty()) {
            int id = model.queue.iterator().next();
            model.cancel(id);
            pending.remove(id).toCompletableFuture().cancel(true);
            collectGranted(pending, model, heldGuards, heldGuardIsWriter);
        }
        heldGuards.forEach(Guard::close);
        for (int i = 0; i < rawReaders; i++) {
            lock.unlockShared();
        }
        if (rawWriter) {
            lock.unlock();
        }
        assertFree(lock);
    }

    /** Moves the acquires the model granted from {@code pending} to the held guards. */
    private static void collectGranted(
            Map<Integer, CompletionStage<Guard>> pending,
            Model model,
            List<Guard> heldGuards,
            List<Boolean> heldGuardIsWriter) {
        for (Iterator<Map.Entry<Integer, CompletionStage<Guard>>> it =
                        pending.entrySet().iterator();
                it.hasNext(); ) {
            Map.Entry<Integer, CompletionStage<Guard>> e = it.next();
            if (!model.queue.contains(e.getKey())) {
                heldGuards.add(guardOf(e.getValue()));
                heldGuardIsWriter.add(model.isWriter.get(e.getKey()));
                it.remove();
            }
        }
    }
}
