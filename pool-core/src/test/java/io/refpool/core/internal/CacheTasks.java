package io.refpool.core.internal;

import java.util.concurrent.ForkJoinTask;

/** The idle cache's calls into {@link CacheMaintenance}, as the cache makes them, for its tests. */
final class CacheTasks {
    private CacheTasks() {}

    /** The cache's maintenance task as the cache submits it: a {@link ForkJoinTask} that is a {@link Runnable}. */
    static final class Task extends ForkJoinTask<Void> implements Runnable {
        private final Runnable work;

        Task(Runnable work) {
            this.work = work;
        }

        @Override
        public void run() {
            work.run();
        }

        @Override
        public Void getRawResult() {
            return null;
        }

        @Override
        protected void setRawResult(Void value) {}

        @Override
        protected boolean exec() {
            run();
            return true;
        }
    }

    /** The cache's executor called from inside a put, as a put that took the cache's lock calls it. */
    static void executeInPut(CacheMaintenance maintenance, Runnable task) {
        int[] put = CacheMaintenance.beginPut();
        try {
            maintenance.execute(task);
        } finally {
            CacheMaintenance.endPut(put);
        }
    }
}
