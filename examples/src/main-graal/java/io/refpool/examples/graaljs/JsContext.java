package io.refpool.examples.graaljs;

import io.refpool.examples.Outcome;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.graalvm.polyglot.Context;
import org.graalvm.polyglot.Engine;
import org.graalvm.polyglot.PolyglotException;
import org.graalvm.polyglot.Value;

/**
 * One tenant's JavaScript context: a GraalJS {@link Context}, which refuses a second thread while
 * one is inside it ({@code IllegalStateException: Multi threaded access requested ... but is not
 * allowed for language(s) js}), so the host lends it to one thread at a time.
 *
 * <pre>{@code
 * JsContext js = new JsContext("tenant-7", engine, unused -> {});
 * Outcome outcome = js.run("globalThis.count = (globalThis.count || 0) + 1", Duration.ofSeconds(1), watchdog);
 * }</pre>
 *
 * <p><b>Sandbox.</b> The context is built with GraalJS's defaults: no access to host classes, files,
 * threads or processes. Scripts reach the host only through what {@link #define} puts in their
 * globals.
 *
 * <p><b>Time limit.</b> Each run arms a watchdog task for its deadline. Past it, the watchdog calls
 * {@link Context#interrupt(Duration)}, which stops the script at its next safepoint (a loop's back
 * edge, say; a {@code try}/{@code catch} in the script does not catch it) and leaves the context
 * usable; the run then answers {@link Outcome.TimedOut} and the context declares itself unfit, since
 * the script may have stopped halfway through changing its state. A script the interrupt does not
 * stop within {@value #INTERRUPT_GRACE_MILLIS} ms is cancelled ({@code close(true)}). The run and
 * its watchdog task settle who finishes with one CAS; a run that loses it waits for the interrupt to
 * be over before it leaves, so that an interrupt meant for it can never reach the next run.
 *
 * <p><b>Corruption.</b> When the context opens, a JavaScript function pins every global, and every
 * own data property of the objects and functions among them ({@code JSON}, {@code Math.max},
 * {@code Object.keys}...). After each script, still under the watchdog, it reports the first pin a
 * script rebound or deleted; the context then declares itself unfit. Globals that scripts add are
 * theirs to change. Prototypes ({@code Array.prototype.push}) lie deeper than the pins reach.
 *
 * <p>The counters ({@link #closes()}, {@link #overlaps()}, {@link #closedDuringACall()}) are there
 * for the host's tests.
 */
public final class JsContext {
    static final long INTERRUPT_GRACE_MILLIS = 5_000;

    /** Pins the globals and one level below; returns the check, which names the first pin broken, or null. */
    private static final String PINS = """
            (function () {
              const is = Object.is, names = Object.getOwnPropertyNames, own = Object.getOwnPropertyDescriptor;
              const pins = [];
              function pin(holder, key, path) {
                const slot = own(holder, key);
                if (slot !== undefined && 'value' in slot) {
                  pins.push({ holder: holder, key: key, path: path, value: slot.value });
                }
                return slot;
              }
              for (const name of names(globalThis)) {
                const slot = pin(globalThis, name, name);
                const value = slot === undefined ? undefined : slot.value;
                if (value !== globalThis && (typeof value === 'function' || (typeof value === 'object' && value !== null))) {
                  for (const member of names(value)) {
                    pin(value, member, name + '.' + member);
                  }
                }
              }
              return function firstDamage() {
                for (let i = 0; i < pins.length; i++) {
                  const p = pins[i], slot = own(p.holder, p.key);
                  if (slot === undefined || !('value' in slot) || !is(slot.value, p.value)) {
                    return p.path;
                  }
                }
                return null;
              };
            })()
            """;

    private final String tenant;
    private final Context context;
    private final Value firstDamage;
    private final boolean pinned;

    /** Guarded by the section: written and read only by the thread that holds it. */
    private boolean fit = true;

    /** Set by the watchdog when an interrupt did not stop a script and it cancelled the context. */
    private volatile boolean cancelled;

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger closes = new AtomicInteger();
    private volatile boolean closedDuringACall;

    /**
     * Opens the context.
     *
     * @param tenant whose context this is
     * @param engine the engine the contexts share (its code caches)
     * @param hostApi adds the host's own globals before the globals are pinned
     */
    public JsContext(String tenant, Engine engine, Consumer<? super JsContext> hostApi) {
        this.tenant = tenant;
        this.context = Context.newBuilder("js").engine(engine).build();
        hostApi.accept(this);
        this.firstDamage = context.eval("js", PINS);
        this.pinned = true;
    }

    /**
     * Adds a global for scripts to use, such as a host function ({@code ProxyExecutable}); only
     * while the context opens.
     */
    public void define(String name, Object value) {
        if (pinned) {
            throw new IllegalStateException(tenant + "'s context is open already: define '" + name + "' in hostApi");
        }
        context.getBindings("js").putMember(name, value);
    }

    /**
     * Runs {@code script}, stopping it at {@code limit} through {@code watchdog}. Call it from one
     * thread at a time.
     *
     * @return the script's value (as a string), its error, {@link Outcome.TimedOut} or
     *     {@link Outcome.Corrupted}; after the last two the context is {@linkplain #isFit() unfit}
     */
    Outcome run(String script, Duration limit, ScheduledExecutorService watchdog) {
        if (running.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        Watch watch = new Watch();
        ScheduledFuture<?> alarm = watchdog.schedule(watch::expire, limit.toNanos(), TimeUnit.NANOSECONDS);
        try {
            Outcome outcome;
            try {
                // a Value belongs to its context: turn it into a string here, in the section
                outcome = new Outcome.Value(context.eval("js", script).toString());
            } catch (PolyglotException error) {
                if (error.isInterrupted() || error.isCancelled() || !error.isGuestException()) {
                    throw error;
                }
                outcome = new Outcome.ScriptError(error.getMessage());
            }
            Value damage = firstDamage.execute();
            if (!damage.isNull()) {
                fit = false;
                return new Outcome.Corrupted(damage.asString());
            }
            return outcome;
        } catch (PolyglotException error) {
            if (error.isInterrupted() || error.isCancelled()) {
                fit = false;
                return new Outcome.TimedOut(limit);
            }
            throw error;
        } finally {
            alarm.cancel(false);
            watch.finish();
            running.decrementAndGet();
        }
    }

    /** {@return false once a script overran its limit or corrupted the globals}: the host retires it then */
    boolean isFit() {
        return fit;
    }

    /**
     * Closes the context; the pool's disposer calls it, exactly once. GraalJS itself refuses to close
     * a context a thread is running in ({@code IllegalStateException}).
     */
    void close() {
        if (running.get() != 0) {
            closedDuringACall = true;
        }
        closes.incrementAndGet();
        context.close(cancelled); // a cancelled context is closed already; close(true) is then a no-op
    }

    public String tenant() {
        return tenant;
    }

    /** {@return how often it was closed}: 1 once the pool disposed of it, 0 before */
    public int closes() {
        return closes.get();
    }

    /** {@return how many runs found another run in this context}: always 0 under the host */
    public int overlaps() {
        return overlaps.get();
    }

    /** {@return whether it was closed while a run was in it}: never under the host */
    public boolean closedDuringACall() {
        return closedDuringACall;
    }

    @Override
    public String toString() {
        return "JsContext[" + tenant + (fit ? "" : ", unfit") + ", closes=" + closes.get() + "]";
    }

    /**
     * One run's deadline. The run and the watchdog settle who finishes first with one CAS on
     * {@code state}:
     *
     * <pre>
     * RUNNING --finish()--> FINISHED   the script returned in time; the watchdog's task does nothing
     * RUNNING --expire()--> EXPIRED    the watchdog interrupts; finish() waits until it has
     * </pre>
     */
    private final class Watch {
        private static final int RUNNING = 0;
        private static final int FINISHED = 1;
        private static final int EXPIRED = 2;

        private final AtomicInteger state = new AtomicInteger(RUNNING);
        private final CountDownLatch interruptDone = new CountDownLatch(1);

        /** The watchdog's task at the deadline. */
        void expire() {
            if (!state.compareAndSet(RUNNING, EXPIRED)) {
                return;
            }
            try {
                context.interrupt(Duration.ofMillis(INTERRUPT_GRACE_MILLIS));
            } catch (TimeoutException notStopped) {
                cancelled = true;
                context.close(true);
            } finally {
                interruptDone.countDown();
            }
        }

        /** The run's thread, out of the script: returns once no interrupt for this run is under way. */
        void finish() {
            if (state.compareAndSet(RUNNING, FINISHED)) {
                return;
            }
            boolean interrupted = false;
            while (true) {
                try {
                    interruptDone.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
