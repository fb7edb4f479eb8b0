package io.refpool.bench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RatioTest {
    private static final double EPSILON = 1e-12;

    @Test
    void throughputRatioIsRefpoolOverPeerForkByFork() {
        Ratio ratio = Ratio.of(List.of(200.0, 210.0, 300.0), List.of(100.0, 140.0, 100.0), true)
                .orElseThrow();
        assertEquals(2.0, ratio.median(), EPSILON);
        assertEquals(1.5, ratio.min(), EPSILON);
        assertEquals(3.0, ratio.max(), EPSILON);
        assertEquals(3, ratio.forks());
    }

    @Test
    void timeRatioIsPeerOverRefpoolSoAboveOneStillMeansRefpoolIsFaster() {
        Ratio ratio = Ratio.of(List.of(10.0, 20.0), List.of(30.0, 50.0), false).orElseThrow();
        assertEquals(2.75, ratio.median(), EPSILON);
        assertEquals(2.5, ratio.min(), EPSILON);
        assertEquals(3.0, ratio.max(), EPSILON);
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        Ratio ratio = Ratio.of(List.of(1.0, 1.0, 1.0, 1.0), List.of(1.0, 0.5, 0.25, 0.125), true)
                .orElseThrow();
        assertEquals(3.0, ratio.median(), EPSILON);
    }

    @Test
    void forksWithoutAPositiveScoreAreLeftOut() {
        Ratio ratio = Ratio.of(List.of(4.0, Double.NaN, 0.0, 6.0), List.of(2.0, 2.0, 2.0), true)
                .orElseThrow();
        assertEquals(1, ratio.forks());
        assertEquals(2.0, ratio.median(), EPSILON);
        assertTrue(Ratio.of(List.of(0.0), List.of(1.0), true).isEmpty());
        assertTrue(Ratio.of(List.of(), List.of(), true).isEmpty());
    }

    @Test
    void rowResultGivesNoRatioForRefpoolItself() {
        RowResult row = CannedResults.attachSuite().rows().get(0);
        assertTrue(row.ratio(row.results().get(0)).isEmpty());
        assertEquals(2.1, row.ratio(row.results().get(1)).orElseThrow().median(), EPSILON);
    }
}
