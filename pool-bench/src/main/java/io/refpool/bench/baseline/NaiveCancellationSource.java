package io.refpool.bench.baseline;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The straightforward cancellation source that compact registration phases replace: the
 * registrations in an {@link ArrayList} under one {@link ReentrantLock}, and every registration
 * with a lock and a {@link Condition} of its own.
 *
 * <pre>{@code
 * NaiveCancellationSource source = new NaiveCancellationSource();
 * NaiveCancellationSource.Registration r = source.register(() -> System.out.println("cancelled"));
 * source.cancel(); // prints "cancelled"
 * r.close();
 * }</pre>
 *
 * <p>It keeps the behaviour of {@code io.refpool.sync.CancellationSource} that the benchmark
 * compares: the first {@link #cancel()} runs the callbacks on its thread, newest first, each at most
 * once, and the others still run when one throws; registering on a cancelled source runs the
 * callback at once; {@link Registration#unregister()} never waits and returns true only if the
 * callback will never run; {@link Registration#close()} waits for a callback running on another
 * thread, except inside a dispatch. It costs three objects per registration (the registration, its
 * lock and its condition), takes the source's lock on register and unregister, and takes each
 * registration's lock twice during a dispatch.
 */
public final class NaiveCancellationSource {
    private static final ThreadLocal<int[]> DISPATCH_DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}; oldest first. */
    private final List<Registration> registrations = new ArrayList<>();
    /** Guarded by {@link #lock}. */
    private boolean cancelled;
    /** Written under {@link #lock}; read without it by {@link #isCancellationRequested()}. */
    private volatile boolean cancellationRequested;

    /** {@return whether cancellation was requested} */
    public boolean isCancellationRequested() {
        return cancellationRequested;
    }

    /**
     * Registers a callback; on a cancelled source runs it now, on this thread.
     *
     * @param callback the action to run on cancellation
     * @return the registration
     */
    public Registration register(Runnable callback) {
        Objects.requireNonNull(callback, "callback");
        Registration registration = new Registration(this, callback);
        lock.lock();
        try {
            if (!cancelled) {
                registrations.add(registration);
                return registration;
            }
        } finally {
            lock.unlock();
        }
        int[] depth = DISPATCH_DEPTH.get();
        depth[0]++;
        try {
            registration.invoke();
        } finally {
            depth[0]--;
        }
        return registration;
    }

    /**
     * Requests cancellation; the first call runs the callbacks, newest first.
     *
     * @return true if this call cancelled
     */
    public boolean cancel() {
        Registration[] selected;
        lock.lock();
        try {
            if (cancelled) {
                return false;
            }
            cancelled = true;
            cancellationRequested = true;
            selected = registrations.toArray(new Registration[0]);
            registrations.clear();
        } finally {
            lock.unlock();
        }
        Throwable first = null;
        int[] depth = DISPATCH_DEPTH.get();
        depth[0]++;
        try {
            for (int i = selected.length - 1; i >= 0; i--) {
                Throwable failure = selected[i].invokeCatching();
                if (failure == null) {
                    continue;
                }
                if (first == null) {
                    first = failure;
                } else if (failure != first) {
                    first.addSuppressed(failure);
                }
            }
        } finally {
            depth[0]--;
        }
        if (first instanceof RuntimeException) {
            throw (RuntimeException) first;
        }
        if (first instanceof Error) {
            throw (Error) first;
        }
        if (first != null) {
            throw new IllegalStateException("a cancellation callback threw a checked exception", first);
        }
        return true;
    }

    private void remove(Registration registration) {
        lock.lock();
        try {
            for (int i = registrations.size() - 1; i >= 0; i--) {
                if (registrations.get(i) == registration) {
                    registrations.remove(i);
                    return;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** A registered callback with its own lock and condition. */
    public static final class Registration implements AutoCloseable {
        private static final int REGISTERED = 0;
        private static final int RUNNING = 1;
        private static final int DONE = 2;
        private static final int REMOVED = 3;

        private final NaiveCancellationSource source;
        private final Runnable callback;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition finished = lock.newCondition();
        /** Guarded by {@link #lock}. */
        private int state = REGISTERED;

        Registration(NaiveCancellationSource source, Runnable callback) {
            this.source = source;
            this.callback = callback;
        }

        /**
         * Removes the callback without waiting.
         *
         * @return true if it was removed before it started
         */
        public boolean unregister() {
            lock.lock();
            try {
                if (state != REGISTERED) {
                    return false;
                }
                state = REMOVED;
            } finally {
                lock.unlock();
            }
            source.remove(this);
            return true;
        }

        /** Removes the callback and waits for it if it runs on another thread. */
        @Override
        public void close() {
            if (unregister() || DISPATCH_DEPTH.get()[0] > 0) {
                return;
            }
            lock.lock();
            try {
                while (state == RUNNING) {
                    finished.awaitUninterruptibly();
                }
            } finally {
                lock.unlock();
            }
        }

        private Throwable invokeCatching() {
            try {
                invoke();
                return null;
            } catch (Throwable failure) {
                return failure;
            }
        }

        private void invoke() {
            lock.lock();
            try {
                if (state != REGISTERED) {
                    return;
                }
                state = RUNNING;
            } finally {
                lock.unlock();
            }
            try {
                callback.run();
            } finally {
                lock.lock();
                try {
                    state = DONE;
                    finished.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        }
    }
}
