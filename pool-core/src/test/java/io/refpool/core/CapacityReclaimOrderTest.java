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
 * touch the cache, so the cache's own order knows only each object's put: a key revived again and
 * again since is not the coldest, whatever that order says.
 */
class CapacityReclaimOrderTest {
    static Stream<Arguments> orderedCaches() {
        return Stream.of(
                Arguments.of("expiry after access", (Consumer<Caffeine<Object, Object>>)
                        cache -> cache.expireAfterAccess(Duration.ofHours(1))),
                Arguments.of("size bound", (Consumer<Caffeine<Object, Object>>) cache -> cache.maximumSize(100)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("orderedCaches")
    void aKeyRevivedSinceItsPutIsNotReclaimedBeforeOneIdleSinceLongBefore(
            String policy, Consumer<Caffeine<Object, Object>> order) {
        Engine engine = new Engine();
        RefPool<String, Session> pool =
                engine.build(engine.builder().maxObjects(2).idle(order));
        try {
            pool.attached(() -> {
                pool.acquire("hot").close(); // idles: the cache's put
                pool.acquire("cold").close(); // idles: the cache's put; never used again
                for (int i = 0; i < 100; i++) {
                    pool.acquire("hot").close(); // revived and idled: no cache write
                }
                pool.acquire("new").close(); // beyond the bound: one idle object is closed
                return null;
            });
            assertEquals(
                    List.of("cold"),
                    engine.disposed.stream().map(session -> session.key).toList(),
                    "the coldest idle object goes first");
            pool.attached(() -> {
                pool.acquire("hot").close(); // still the same object, revived
                return null;
            });
            assertEquals(3, engine.created.size(), "hot was made again");
        } finally {
            pool.close(Duration.ofSeconds(10));
        }
        assertEquals(List.of(), engine.violations);
    }
}
