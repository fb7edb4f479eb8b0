package io.refpool.core.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;

/**
 * The production {@link ReleaseQueue}: a padded {@code dirty} flag checked with one acquire load.
 *
 * <h2>Implementation notes</h2>
 *
 * <pre>
 *   dirty      to       by
 *   false      true     enqueue, with a release store, after its add is visible under the lock
 *   true       false    the one attaching thread whose CAS wins; it then locks and swaps the batch
 * </pre>
 *
 * <p><b>The check</b> ({@link #takeIfDirty()}) is one acquire load when nothing is pending: no CAS,
 * no swap, no lock, no write to shared memory, so attaching threads do not contend on this queue and
 * attach scales with cores. When the flag is set, a CAS from true to false lets one attacher through
 * to the lock; the others go on without waiting.
 *
 * <p><b>Why nothing is lost.</b> An enqueue adds under the lock and only then raises the flag. If its
 * raise happens before a drainer's CAS clears the flag, the add happened before that CAS and so
 * before the drainer's swap, which takes it. If the raise happens after the CAS, the flag stays up
 * for the next attach. Either way the release is applied by the first attach that starts after its
 * close returned. An attach that races a concurrent enqueue may miss it; the flag then stays up and
 * the next attach (or the drainer) applies it: the race is benign, never a loss and never a double
 * apply, because the swap moves each item out of the list exactly once.
 *
 * <p><b>Layout.</b> The flag sits alone on its cache lines: 128 bytes of padding on each side (two
 * lines, for adjacent-line prefetch) keep it apart from the queue's lock word, the list, its size
 * (written on every enqueue) and from neighbouring objects, so attachers reading it do not miss on
 * writes they do not care about. Byte fields are used for padding because the JVM packs narrower
 * subclass fields into gaps of a superclass's layout; bytes leave no gaps.
 */
public final class DirtyFlagReleaseQueue extends DirtyFlagPadAfter {
    private static final VarHandle DIRTY;

    static {
        try {
            DIRTY = MethodHandles.lookup().findVarHandle(DirtyFlagField.class, "dirty", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public DirtyFlagReleaseQueue() {}

    @Override
    public ArrayList<Object> takeIfDirty() {
        if (!(boolean) DIRTY.getAcquire(this)) {
            return null;
        }
        if (!DIRTY.compareAndSet(this, true, false)) {
            return null; // another attacher is draining this batch
        }
        return swapBatch();
    }

    @Override
    protected void raiseDirty() {
        DIRTY.setRelease(this, true);
    }

    @Override
    public boolean isDirty() {
        return (boolean) DIRTY.getAcquire(this);
    }
}

/** Padding between the base class's fields and the flag. */
abstract class DirtyFlagPadBefore extends ReleaseQueue {
    byte p000, p001, p002, p003, p004, p005, p006, p007;
    byte p008, p009, p010, p011, p012, p013, p014, p015;
    byte p016, p017, p018, p019, p020, p021, p022, p023;
    byte p024, p025, p026, p027, p028, p029, p030, p031;
    byte p032, p033, p034, p035, p036, p037, p038, p039;
    byte p040, p041, p042, p043, p044, p045, p046, p047;
    byte p048, p049, p050, p051, p052, p053, p054, p055;
    byte p056, p057, p058, p059, p060, p061, p062, p063;
    byte p064, p065, p066, p067, p068, p069, p070, p071;
    byte p072, p073, p074, p075, p076, p077, p078, p079;
    byte p080, p081, p082, p083, p084, p085, p086, p087;
    byte p088, p089, p090, p091, p092, p093, p094, p095;
    byte p096, p097, p098, p099, p100, p101, p102, p103;
    byte p104, p105, p106, p107, p108, p109, p110, p111;
    byte p112, p113, p114, p115, p116, p117, p118, p119;
    byte p120, p121, p122, p123, p124, p125, p126, p127;
}

/** The flag, alone between two paddings. */
abstract class DirtyFlagField extends DirtyFlagPadBefore {
    @SuppressWarnings("unused") // accessed through DirtyFlagReleaseQueue.DIRTY
    volatile boolean dirty;
}

/** Padding between the flag and whatever the allocator puts next. */
abstract class DirtyFlagPadAfter extends DirtyFlagField {
    byte q000, q001, q002, q003, q004, q005, q006, q007;
    byte q008, q009, q010, q011, q012, q013, q014, q015;
    byte q016, q017, q018, q019, q020, q021, q022, q023;
    byte q024, q025, q026, q027, q028, q029, q030, q031;
    byte q032, q033, q034, q035, q036, q037, q038, q039;
    byte q040, q041, q042, q043, q044, q045, q046, q047;
    byte q048, q049, q050, q051, q052, q053, q054, q055;
    byte q056, q057, q058, q059, q060, q061, q062, q063;
    byte q064, q065, q066, q067, q068, q069, q070, q071;
    byte q072, q073, q074, q075, q076, q077, q078, q079;
    byte q080, q081, q082, q083, q084, q085, q086, q087;
    byte q088, q089, q090, q091, q092, q093, q094, q095;
    byte q096, q097, q098, q099, q100, q101, q102, q103;
    byte q104, q105, q106, q107, q108, q109, q110, q111;
    byte q112, q113, q114, q115, q116, q117, q118, q119;
    byte q120, q121, q122, q123, q124, q125, q126, q127;
}
