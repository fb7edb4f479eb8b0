package io.refpool.core.internal;

import io.refpool.sync.Guard;

/**
 * A held section, as {@code Handle.section()}, {@code sectionAsync} and {@code callAsync} return
 * it: the lock's hold, a reference of its own on the object (taken by {@link Section} before the
 * wait) and, for a caller's own section, the pool's section hooks around it. Closing it clears the
 * holder, releases the lock, then the reference, once.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   state     event                                  next      who
 *   -         granted, then hooked(): enter hook ran  HELD      the thread or grant that took it
 *   HELD      runningOn(): callAsync's function runs HELD      the holder becomes that thread
 *   HELD      close(), the first                     RELEASED  leave hook (if any), unlock, reference back
 *   RELEASED  close() again                          RELEASED  nothing
 * </pre>
 *
 * <p>{@code closed} is checked and set under the guard's own monitor, so two threads closing it
 * at once release it once; the hook and the releases run after, outside the monitor, as user code
 * (the leave hook) never runs under an internal lock. A leave hook that throws is reported by
 * {@link RunControl}, and the section and the reference are released anyway.
 */
final class SectionHold<K, V> implements Guard {
    private final Handles<K, V> handles;
    private final Entry<K, V> entry;
    private final Section section;
    /** The lock's guard if the entry had to wait, else {@code null} (the raw tryLock pair). */
    private final Guard lockGuard;
    /** Whose leave hook runs at close: {@code null} if none, or if the holder runs it itself (callAsync). */
    private final RunControl<K, V> runs;

    private boolean closed;

    SectionHold(Handles<K, V> handles, Entry<K, V> entry, Section section, Guard lockGuard, RunControl<K, V> runs) {
        this.handles = handles;
        this.entry = entry;
        this.section = section;
        this.lockGuard = lockGuard;
        this.runs = runs;
    }

    /**
     * The guard of a section just taken, after the pool's enter hook (if any) ran on this thread;
     * an enter hook that throws leaves the section free (the caller gives the reference back).
     */
    static <K, V> SectionHold<K, V> hooked(Handles<K, V> handles, Entry<K, V> entry, Section section, Guard lockGuard) {
        RunControl<K, V> runs = handles.runs;
        if (runs != null) {
            try {
                runs.enter(entry);
            } catch (Throwable t) {
                section.unlock(lockGuard);
                throw t;
            }
        }
        return new SectionHold<>(handles, entry, section, lockGuard, runs);
    }

    /** Lets the running thread use the object inside an async caller's section. */
    void runningOn(Thread thread) {
        section.holder(thread.getId());
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (runs != null) {
            runs.leave(entry); // reports a failure; the section is released anyway
        }
        section.unlock(lockGuard);
        handles.release(entry, null);
    }

    @Override
    public String toString() {
        return "Section[" + Keys.describe(entry.key) + (closed ? ", released" : ", held") + "]";
    }
}
