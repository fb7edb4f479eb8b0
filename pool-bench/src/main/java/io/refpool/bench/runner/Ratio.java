package io.refpool.bench.runner;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * How many times faster refpool is than a peer: the median of the per-fork ratios, with their
 * spread. Above 1 refpool is faster, below 1 it is slower, in every mode.
 *
 * <pre>{@code
 * // throughput: refpool ÷ peer, fork by fork
 * Ratio.of(List.of(200.0, 210.0), List.of(100.0, 140.0), true);   // median 1.75, min 1.5, max 2.0
 * }</pre>
 *
 * <p>Fork <i>i</i> of refpool and fork <i>i</i> of the peer ran next to each other (the plan
 * interleaves them), so their quotient cancels slow drifts of the machine; the spread of the
 * quotients shows how much that left. For throughput the quotient is refpool ÷ peer; for the time
 * modes (ns/op) it is peer ÷ refpool, so that the meaning of "above 1" does not change.
 *
 * @param median the median of the per-fork ratios
 * @param min the smallest per-fork ratio
 * @param max the largest per-fork ratio
 * @param forks how many fork pairs went into it
 */
record Ratio(double median, double min, double max, int forks) {

    /**
     * Pairs the forks in order and returns the ratio, or empty when no fork pair has two finite,
     * positive scores (a failed run, a zero score).
     */
    static Optional<Ratio> of(List<Double> refpoolForks, List<Double> peerForks, boolean higherIsBetter) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < Math.min(refpoolForks.size(), peerForks.size()); i++) {
            double refpool = refpoolForks.get(i);
            double peer = peerForks.get(i);
            if (isPositive(refpool) && isPositive(peer)) {
                ratios.add(higherIsBetter ? refpool / peer : peer / refpool);
            }
        }
        if (ratios.isEmpty()) {
            return Optional.empty();
        }
        Collections.sort(ratios);
        int n = ratios.size();
        double median = n % 2 == 1 ? ratios.get(n / 2) : (ratios.get(n / 2 - 1) + ratios.get(n / 2)) / 2;
        return Optional.of(new Ratio(median, ratios.get(0), ratios.get(n - 1), n));
    }

    private static boolean isPositive(double score) {
        return Double.isFinite(score) && score > 0;
    }
}
