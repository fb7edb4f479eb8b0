package io.refpool.bench;

import java.util.SplittableRandom;

/**
 * Pre-drawn tenant ranks with a Zipf (s = 1) distribution, so a benchmark's request picks its tenant
 * with an array read instead of a random draw.
 *
 * <pre>{@code
 * int[] ranks = ZipfDraws.draw(64, 1 << 14, Thread.currentThread().getId());
 * String tenant = NAMES[ranks[cursor++ & (ranks.length - 1)]];
 * }</pre>
 *
 * <p>Rank 0 is the hottest tenant: it is drawn {@code n} times as often as rank {@code n - 1}.
 */
final class ZipfDraws {
    private ZipfDraws() {}

    /** {@return {@code count} ranks in {@code [0, tenants)}, Zipf-distributed, from {@code seed}} */
    static int[] draw(int tenants, int count, long seed) {
        double[] cumulative = new double[tenants];
        double sum = 0;
        for (int rank = 0; rank < tenants; rank++) {
            sum += 1.0 / (rank + 1);
            cumulative[rank] = sum;
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] draws = new int[count];
        for (int i = 0; i < count; i++) {
            double u = random.nextDouble() * sum;
            int rank = 0;
            while (cumulative[rank] < u) {
                rank++;
            }
            draws[i] = rank;
        }
        return draws;
    }
}
