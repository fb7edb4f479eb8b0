package io.refpool.core.internal;

/**
 * Test seam of the objects' counts, for every pool of the JVM at once (the count belongs to no
 * pool's seams): installable only where the build turns the seams on ({@link TestSeams}).
 *
 * <pre>{@code
 * EntrySeams.setStrayAdded(() -> paused.await()); // a retain that found a negative count stops
 * try {
 *     // ... race it against a revive check
 * } finally {
 *     EntrySeams.setStrayAdded(null);
 * }
 * }</pre>
 */
public final class EntrySeams {
    private EntrySeams() {}

    /**
     * Installs the seam run by a retain that found an object's count negative, between its add and
     * its take-back ({@code Entry.tryRetain}); {@code null} turns it off.
     *
     * @param seam what runs there, on the retaining thread
     * @throws IllegalStateException if the JVM runs without test seams ({@link TestSeams})
     */
    public static void setStrayAdded(Runnable seam) {
        TestSeams.checkInstallable(seam);
        Entry.strayAdded = seam;
    }

    /**
     * {@return the count of the object behind {@code handle}}: the references held on it (open
     * handles, sections and waits that retain it), read once; for tests
     *
     * @param handle a handle the pool made
     */
    public static int countBehind(io.refpool.core.Handle<?> handle) {
        return ((PooledHandle<?, ?>) handle).entry.count();
    }
}
