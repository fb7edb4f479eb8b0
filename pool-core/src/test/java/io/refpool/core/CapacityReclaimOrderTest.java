package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.refpool.core.TestKeyedPoolFixtures.Engine;
import io.refpool.core.TestKeyedPoolFixtures.Session;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A creation beyond {@code maxObjects} closes the coldest idle object first. A revive does not
 * touch the cache, so the cache's own order knows only each object's put: keys revived again and
 * again since are not the coldest, whatever that order says, also when there are more of them
 * than the reclaim sees at one look.
 */
class CapacityReclaimOrderTest {
    static Stream<Arguments> orderedCaches() {
        Consumer<Caffeine<Object, Object>> byAccess = cache -> cache.expireAfterAccess(Duration.ofHours(1));
        Consumer<Caffeine<Object, Object>> bySize = cache -> cache.maximumSize(100);
        return Stream.of(
                Arguments.of("expiry after access", byAccess, 1),
                Arguments.of("expiry after access", byAccess, 4),
                Arguments.of("size bound", bySize, 1),
                Arguments.of("size bound", bySize, 4));
    }

    @ParameterizedTest(name = "{0}, {2} hot")
    @MethodSource("orderedCaches")
    void keysRevivedSinceTheirPutsAreNotReclaimedBeforeOneIdleSinceLongBefore(
            String policy, Consumer<Caffeine<Object, Object>> order, int hotKeys) {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(hotKeys + 1).idle(order));
        try {
            pool.attached(() -> {
                for (int h = 0; h < hotKeys; h++) {
                    pool.acquire("hot" + h).close(); // idles: the cache's put
                }
                pool.acquire("cold").close(); // the last put; never used again
                for (int i = 0; i < 100; i++) {
                    for (int h = 0; h < hotKeys; h++) {
                        pool.acquire("hot" + h).close(); // revived and idled: no cache write
                    }
                }
                pool.acquire("new").close(); // beyond the bound: one idle object is closed
                return null;
            });
            assertEquals(
                    List.of("cold"),
                    engine.disposed.stream().map(session -> session.key).toList(),
                    "the coldest idle object goes first");
        } finally {
            pool.close(Duration.ofSeconds(10));
        }
        assertEquals(List.of(), engine.violations);
    }
}
