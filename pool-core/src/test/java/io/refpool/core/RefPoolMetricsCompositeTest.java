package io.refpool.core;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * Two pools of one name and a {@link CompositeMeterRegistry}: the registry a binding reports to is
 * the composite's child, which would hand back the other pool's meter as a plain registry does; the
 * second pool is refused as a plain registry refuses it.
 */
class RefPoolMetricsCompositeTest {

    /**
     * A close whose child registry refuses the remove leaves the first pool's meters in the child
     * (the composite dropped its own): a second pool of the same name bound to the composite must
     * be refused, as it is when bound to the child itself.
     */
    @Test
    void aPoolOfTheSameNameIsRefusedByACompositeWhoseChildHoldsTheLeftovers() {
        RefPool<String, Object> first =
                RefPool.<String, Object>builder(k -> new Object()).name("twice").build();
        RefPool<String, Object> second =
                RefPool.<String, Object>builder(k -> new Object()).name("twice").build();
        try {
            RefPoolMetricsCloseTest.RemoveFailsRegistry child = new RefPoolMetricsCloseTest.RemoveFailsRegistry();
            child.failing = false;
            CompositeMeterRegistry composite = new CompositeMeterRegistry();
            composite.add(child);
            RefPoolMetrics firstMetrics = new RefPoolMetrics(first);
            firstMetrics.bindTo(composite);
            child.failing = true;
            assertThrows(IllegalStateException.class, firstMetrics::close); // the child kept the meters
            child.failing = false;

            first.call("a", o -> o); // one creation in the first pool, none in the second

            // the child holds the first pool's meters: the second pool would report through them
            Throwable refused = null;
            try {
                new RefPoolMetrics(second).bindTo(composite);
            } catch (IllegalStateException e) {
                refused = e;
            }
            second.call("b", o -> o);
            second.call("c", o -> o);
            double inChild = child.get("refpool.creations")
                    .tag("pool", "twice")
                    .functionCounter()
                    .count();
            assertNotNull(
                    refused,
                    "bound, and the child registry reports the second pool's creations as " + inChild
                            + " (the first pool's) instead of 2");
        } finally {
            first.close();
            second.close();
        }
    }

    /** The same without a failure: the first pool bound to the child, the second to the composite. */
    @Test
    void aPoolOfTheSameNameIsRefusedByACompositeWhoseChildHoldsItsMeters() {
        RefPool<String, Object> first =
                RefPool.<String, Object>builder(k -> new Object()).name("twice").build();
        RefPool<String, Object> second =
                RefPool.<String, Object>builder(k -> new Object()).name("twice").build();
        io.micrometer.core.instrument.simple.SimpleMeterRegistry child =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        CompositeMeterRegistry composite = new CompositeMeterRegistry();
        composite.add(child);
        try {
            new RefPoolMetrics(first).bindTo(child);
            Throwable refused = null;
            try {
                new RefPoolMetrics(second).bindTo(composite);
            } catch (IllegalStateException e) {
                refused = e;
            }
            second.call("a", o -> o);
            second.call("b", o -> o);
            double inChild = child.get("refpool.creations").functionCounter().count();
            assertNotNull(
                    refused,
                    "bound, and the child registry reports the second pool's creations as " + inChild
                            + " (the first pool's) instead of 2");
        } finally {
            first.close();
            second.close();
        }
    }

    /**
     * One binding to a composite and then to its child would record every duration twice: refused,
     * and the refusal names the binding's own composite as a cause, where no other pool has the name.
     */
    @Test
    void aBindingToACompositeAndToItsChildIsRefusedNamingItself() {
        RefPool<String, Object> pool =
                RefPool.<String, Object>builder(k -> new Object()).name("one").build();
        try {
            SimpleMeterRegistry child = new SimpleMeterRegistry();
            CompositeMeterRegistry composite = new CompositeMeterRegistry();
            composite.add(child);
            RefPoolMetrics metrics = new RefPoolMetrics(pool);
            metrics.bindTo(composite);
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> metrics.bindTo(child));
            assertTrue(
                    refused.getMessage().contains("or this RefPoolMetrics is, through a composite registry"),
                    refused.getMessage());
            metrics.close();
        } finally {
            pool.close();
        }
    }
}
