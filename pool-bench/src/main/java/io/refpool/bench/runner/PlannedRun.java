package io.refpool.bench.runner;

import java.util.Optional;

/**
 * One JMH invocation of the plan: one row, one implementation, one fork (one JVM).
 *
 * <pre>{@code
 * new PlannedRun(row, Optional.of("swap-flag"), 1, 2).describe();
 * // "attach nested state=sparse threads=2 impl=swap-flag fork 1/2"
 * }</pre>
 *
 * @param row the row measured
 * @param impl the {@code impl} parameter value; empty for a single-implementation row
 * @param fork which fork of this row and implementation, from 1
 * @param forks how many forks each implementation of the row gets
 */
record PlannedRun(Row row, Optional<String> impl, int fork, int forks) {

    String describe() {
        return row.suite() + " " + row.label() + " threads=" + row.threads()
                + impl.map(i -> " impl=" + i).orElse("") + " fork " + fork + "/" + forks;
    }
}
