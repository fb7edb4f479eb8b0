package io.refpool.sync;

import static io.refpool.sync.SyncTesting.assertPermits;
import static io.refpool.sync.SyncTesting.granted;
import static io.refpool.sync.SyncTesting.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link AsyncSemaphore} serves requests of different sizes in call order: a large head is never
 * overtaken, and one release serves every head request that fits. The line every primitive keeps
 * is in {@link FifoFairnessTest}.
 */
class AsyncSemaphoreFairnessTest {
    @Test
    void requestsAreGrantedInCallOrder() {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 4);
        List<String> order = new ArrayList<>();
        int[] sizes = {2, 1, 3, 1, 4};
        for (int i = 0; i < sizes.length; i++) {
            String name = i + ":" + sizes[i];
            semaphore.acquire(sizes[i]).thenAccept(guard -> {
                order.add(name);
                guard.close();
            });
        }
        assertEquals(sizes.length, semaphore.queueLength());

        semaphore.release(4);

        assertEquals(List.of("0:2", "1:1", "2:3", "3:1", "4:4"), order);
        assertPermits(semaphore, 4);
    }

    @Test
    void largeHeadRequestIsNotOvertakenBySmallerOnes() {
        AsyncSemaphore semaphore = new AsyncSemaphore(1, 4);
        CompletableFuture<Guard> large = waiting(semaphore.acquire(3));
        CompletableFuture<Guard> small = waiting(semaphore.acquire(1));

        assertFalse(semaphore.tryAcquirePermits(1), "a permit is free, but a larger request is queued");
        assertTrue(semaphore.tryAcquire(1).isEmpty());
        semaphore.release(1); // two available: still not enough for the head

        assertFalse(large.isDone());
        assertFalse(small.isDone(), "the small request must not overtake the large head");
        assertEquals(2, semaphore.availablePermits());

        semaphore.release(1); // three: the head fits, and nothing is left for the small one
        Guard largeGuard = granted(large);
        assertFalse(small.isDone());
        assertEquals(0, semaphore.availablePermits());

        largeGuard.close();
        granted(small).close();
        assertPermits(semaphore, 3); // created with one of four, then two released
    }

    @Test
    void oneReleaseServesEveryHeadRequestThatFits() {
        AsyncSemaphore semaphore = new AsyncSemaphore(0, 5);
        CompletableFuture<Guard> a = waiting(semaphore.acquire(2));
        CompletableFuture<Guard> b = waiting(semaphore.acquire(2));
        CompletableFuture<Guard> c = waiting(semaphore.acquire(2));

        semaphore.release(5);

        Guard ga = granted(a);
        Guard gb = granted(b);
        assertFalse(c.isDone(), "one permit left, not enough for the third");
        assertEquals(1, semaphore.availablePermits());
        ga.close();
        gb.close();
        granted(c).close();
        assertPermits(semaphore, 5);
    }
}
