package io.refpool.bench.runner;

import java.util.List;
import java.util.Optional;

/**
 * The measurements of one row: one {@link ImplResult} per implementation that ran, refpool first,
 * and the implementations whose runs failed.
 *
 * <pre>{@code
 * RowResult result = new RowResult(row, List.of(refpool, swapFlag), List.of());
 * result.ratio(swapFlag);   // Optional[Ratio[median=1.6, ...]]
 * }</pre>
 *
 * @param row the row
 * @param results the measured implementations, in the row's order
 * @param failed the implementations whose runs failed, so the report can say so
 */
record RowResult(Row row, List<ImplResult> results, List<String> failed) {

    RowResult {
        results = List.copyOf(results);
        failed = List.copyOf(failed);
    }

    Optional<ImplResult> refpool() {
        return results.stream().filter(ImplResult::isRefpool).findFirst();
    }

    /** refpool's speedup over {@code peer}; empty for refpool itself or when refpool has no result. */
    Optional<Ratio> ratio(ImplResult peer) {
        if (peer.isRefpool()) {
            return Optional.empty();
        }
        return refpool().flatMap(refpool -> Ratio.of(refpool.forkScores(), peer.forkScores(), row.higherIsBetter()));
    }
}
