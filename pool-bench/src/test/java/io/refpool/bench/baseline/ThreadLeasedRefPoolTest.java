package io.refpool.bench.baseline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The lease cost model keeps the counts it claims: one reference per lease, plus the uses' own. */
class ThreadLeasedRefPoolTest {
    /** A key whose hash is its number, so its home record is known. */
    record Key(int n) {
        @Override
        public int hashCode() {
            return n;
        }
    }

    private final AtomicInteger created = new AtomicInteger();
    private final ThreadLeasedRefPool<Key, Object> pool = new ThreadLeasedRefPool<>(key -> {
        created.incrementAndGet();
        return new Object();
    });

    private void use(Key key) {
        try (ThreadLeasedRefPool.Use<Object> use = pool.acquire(key)) {
            use.get();
        }
    }

    @Test
    void aThreadKeepsOneReferenceForEveryUseOfAKey() {
        Key key = new Key(7);
        for (int i = 0; i < 100; i++) {
            use(key);
        }
        assertEquals(1, pool.count(key));
        assertEquals(1, created.get());
    }

    @Test
    void anEqualKeyOfAnotherInstanceUsesTheSameLease() {
        use(new Key(7));
        use(new Key(7));
        assertEquals(1, pool.count(new Key(7)));
    }

    @Test
    void eachThreadHoldsALeaseOfItsOwn() throws InterruptedException {
        Key key = new Key(3);
        use(key);
        Thread other = new Thread(() -> use(key));
        other.start();
        other.join();
        assertEquals(2, pool.count(key));
    }

    @Test
    void nestedUsesOfALeasedKeyShareItsReference() {
        Key key = new Key(5);
        try (ThreadLeasedRefPool.Use<Object> outer = pool.acquire(key);
                ThreadLeasedRefPool.Use<Object> inner = pool.acquire(key)) {
            assertSame(outer.get(), inner.get());
            assertEquals(1, pool.count(key));
        }
        assertEquals(1, pool.count(key));
    }

    @Test
    void aFullTableReplacesTheHomeLeaseAndGivesItsReferenceBack() {
        for (int n = 0; n < ThreadLeasedRefPool.RECORDS; n++) {
            use(new Key(n));
        }
        Key newcomer = new Key(ThreadLeasedRefPool.RECORDS); // home record 0, held by key 0
        use(newcomer);
        assertEquals(0, pool.count(new Key(0)));
        assertEquals(1, pool.count(newcomer));
    }

    @Test
    void aUseOpenOnTheLeaseToReplaceHoldsAReferenceOfItsOwn() {
        for (int n = 1; n < ThreadLeasedRefPool.RECORDS; n++) {
            use(new Key(n));
        }
        Key resident = new Key(0);
        Key newcomer = new Key(ThreadLeasedRefPool.RECORDS); // home record 0
        try (ThreadLeasedRefPool.Use<Object> open = pool.acquire(resident)) {
            try (ThreadLeasedRefPool.Use<Object> own = pool.acquire(newcomer)) {
                assertEquals(1, pool.count(newcomer));
            }
            assertEquals(0, pool.count(newcomer));
            assertEquals(1, pool.count(resident));
        }
        assertEquals(1, pool.count(resident));
    }
}
