package io.refpool.sync;

import static io.refpool.sync.MutexRoles.NOT_APPLICABLE;
import static io.refpool.sync.MutexRoles.SLOTS;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The sequential FIFO lock that {@link AsyncMutex} must be linearizable to: the operations of
 * {@link MutexRoles}, each atomic. A release hands the lock to the head waiter; a cancelled waiter
 * leaves the line; nobody takes a lock that someone waits for.
 */
public final class MutexSpec {
    private static final int IDLE = 0;
    private static final int OWNS = 1;
    private static final int WAITS = 2;
    private static final int OWNS_BY_TRY_LOCK = 3;

    private final int[] role = new int[SLOTS];
    private final ArrayDeque<Integer> queue = new ArrayDeque<>();
    private boolean locked;

    private boolean free() {
        return !locked && queue.isEmpty();
    }

    public int tryLock(int t) {
        if (role[t] != IDLE) {
            return NOT_APPLICABLE;
        }
        if (free()) {
            locked = true;
            role[t] = OWNS_BY_TRY_LOCK;
            return 1;
        }
        return 0;
    }

    public int acquire(int t) {
        if (role[t] != IDLE) {
            return NOT_APPLICABLE;
        }
        if (free()) {
            locked = true;
            role[t] = OWNS;
        } else {
            queue.addLast(t);
            role[t] = WAITS;
        }
        return 0;
    }

    public int cancel(int t) {
        if (role[t] == OWNS) {
            return 0; // the grant won
        }
        if (role[t] != WAITS) {
            return NOT_APPLICABLE;
        }
        queue.remove(t);
        role[t] = IDLE;
        return 1;
    }

    public int acquireThenCancel(int t) {
        if (role[t] != IDLE) {
            return NOT_APPLICABLE;
        }
        if (free()) {
            locked = true;
            role[t] = OWNS;
            return 1;
        }
        return 0;
    }

    public int unlock(int t) {
        if (role[t] == WAITS) {
            return 0;
        }
        if (role[t] == IDLE) {
            return NOT_APPLICABLE;
        }
        role[t] = IDLE;
        Integer next = queue.pollFirst();
        if (next == null) {
            locked = false;
        } else {
            role[next] = OWNS;
        }
        return 1;
    }

    public boolean isLocked() {
        return locked;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof MutexSpec)) {
            return false;
        }
        MutexSpec other = (MutexSpec) o;
        return other.locked == locked
                && Arrays.equals(other.role, role)
                && Arrays.equals(other.queue.toArray(), queue.toArray());
    }

    @Override
    public int hashCode() {
        return (Arrays.hashCode(role) * 31 + Arrays.hashCode(queue.toArray())) * 2 + (locked ? 1 : 0);
    }
}
