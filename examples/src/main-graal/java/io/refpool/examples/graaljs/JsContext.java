package io.refpool.examples.graaljs;

import io.refpool.core.Interrupter;
import io.refpool.examples.Outcome;
import java.time.Duration;
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
 * Outcome outcome = js.run("globalThis.count = (globalThis.count || 0) + 1", Duration.ofSeconds(1));
 * }</pre>
 *
 * <p><b>Sandbox.</b> The context is built with GraalJS's defaults: no access to host classes, files,
 * threads or processes. Scripts reach the host only through what {@link #define} puts in their
 * globals.
 *
 * <p><b>Thread binding.</b> The host's pool calls {@link #enter()} on the thread that takes the
 * context's section and {@link #leave()} before it lets go, so the context is bound to that thread
 * for the whole request ({@code eval}'s own implicit enters nest inside). GraalJS still referees:
 * a second thread entering at the same time would throw.
 *
 * <p><b>Time limit.</b> The host's pool calls {@link #interrupt()} on a thread of its own when a
 * request's limit passes while a script runs. {@link Context#interrupt(Duration)} stops the script
 * at its next safepoint (a loop's back edge, say; a {@code try}/{@code catch} in the script does not
 * catch it); the run sees GraalJS's own {@link PolyglotException} ({@code isInterrupted()}) and
 * answers {@link Outcome.TimedOut}. A script the interrupt does not stop within the grace
 * ({@value #INTERRUPT_GRACE_MILLIS} ms unless the host says otherwise) is cancelled
 * ({@code close(true)}), for instance one held in a host function that ignores thread interrupts. Either way the context is
 * retired: the script may have stopped halfway through changing its state.
 *
 * <p><b>Corruption.</b> When the context opens, a JavaScript function pins every global, and every
 * own data property of the objects and functions among them ({@code JSON}, {@code Math.max},
 * {@code Object.keys}...). After each script the run checks the globals only, which is cheap
 * ({@link Outcome.Corrupted}: the host retires the context at once); the deeper pins, a few hundred
 * of them, are checked by {@link #isUsable()} when the pool revives the context from idle, so a
 * rebound {@code Math.max} is found before the tenant's next script once its requests pause, and
 * never costs a busy tenant anything per script. Globals that scripts add are theirs to change.
 * Prototypes ({@code Array.prototype.push}) lie deeper than the pins reach.
 *
 * <p>The counters ({@link #closes()}, {@link #overlaps()}, {@link #closedDuringACall()}) are there
 * for the host's tests.
 */
public final class JsContext {
    static final long INTERRUPT_GRACE_MILLIS = 5_000;
    /** The default of how long an interrupt may take to stop a script before the context is cancelled. */
    static final Duration INTERRUPT_GRACE = Duration.ofMillis(INTERRUPT_GRACE_MILLIS);

    static final long INTERRUPT_ROUND_MILLIS = 20;

    /**
     * Pins the globals and one level below; returns the check, which names the first pin broken, or
     * null: the globals only, or with {@code deep} every pin.
     */
    private static final String PINS = """
            (function () {
              const is = Object.is, names = Object.getOwnPropertyNames, own = Object.getOwnPropertyDescriptor;
              const pins = [], deepPins = [];
              function pin(holder, key, path, deep) {
                const slot = own(holder, key);
                if (slot !== undefined && 'value' in slot) {
                  (deep ? deepPins : pins).push({ holder: holder, key: key, path: path, value: slot.value, deep: deep });
                }
                return slot;
              }
              for (const name of names(globalThis)) {
                const slot = pin(globalThis, name, name, false);
                const value = slot === undefined ? undefined : slot.value;
                if (value !== globalThis && (typeof value === 'function' || (typeof value === 'object' && value !== null))) {
                  for (const member of names(value)) {
                    pin(value, member, name + '.' + member, true);
                  }
                }
              }
              pins.push(...deepPins); // after every global, so that a check of the globals stops at the first deep pin
              return function firstDamage(deep) {
                for (let i = 0; i < pins.length; i++) {
                  const p = pins[i];
                  if (p.deep && !deep) {
                    break; // the deep pins come after every global
                  }
                  const slot = own(p.holder, p.key);
                  if (slot === undefined || !('value' in slot) || !is(slot.value, p.value)) {
                    return p.path;
                  }
                }
                return null;
              };
            })()
            """;

    private final String tenant;
    /** How long an interrupt may take before the context is cancelled, in nanoseconds. */
    private final long interruptGraceNanos;

    private final Context context;
    private final Value firstDamage;
    private final boolean pinned;

    /** Guarded by the section: written and read only by the thread that holds it. */
    private boolean fit = true;

    /** Set by {@link #interrupt()} when an interrupt did not stop a script and it cancelled the context. */
    private volatile boolean cancelled;

    /** Set by {@link #interrupt()}, on the pool's interrupting thread. */
    private volatile boolean interrupted;

    /** Whether a run is in guest code; the interrupter waits only while it is. */
    private volatile boolean inGuest;

    /** Closes the context with {@code close(true)} when an interrupt did not stop a script. */
    private volatile Thread canceller;

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
        this(tenant, engine, INTERRUPT_GRACE, hostApi);
    }

    /**
     * Opens the context, cancelled by {@link #interrupt()} if an interrupt has not stopped its
     * script within {@code interruptGrace}.
     */
    JsContext(String tenant, Engine engine, Duration interruptGrace, Consumer<? super JsContext> hostApi) {
        this.tenant = tenant;
        this.interruptGraceNanos = interruptGrace.toNanos();
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
     * Runs {@code script}. Call it from one thread at a time, the one that {@linkplain #enter()
     * entered}.
     *
     * @param limit the request's limit, which {@link Outcome.TimedOut} reports
     * @return the script's value (as a string), its error, {@link Outcome.TimedOut} or
     *     {@link Outcome.Corrupted}; after the last two the context is {@linkplain #isFit() unfit}
     */
    Outcome run(String script, Duration limit) {
        if (running.incrementAndGet() != 1) {
            overlaps.incrementAndGet();
        }
        inGuest = true;
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
            Value damage = firstDamage.execute(false);
            if (!damage.isNull()) {
                fit = false;
                return new Outcome.Corrupted(damage.asString());
            }
            return outcome;
        } catch (PolyglotException error) {
            if (error.isInterrupted() || error.isCancelled()) {
                fit = false; // GraalJS's own failure, caused by interrupt() on the pool's interrupting thread
                return new Outcome.TimedOut(limit);
            }
            throw error;
        } finally {
            inGuest = false; // the interrupter stops waiting for the script
            running.decrementAndGet();
        }
    }

    /** {@return false once a script was interrupted or corrupted the globals}: the host retires it then */
    boolean isFit() {
        return fit && !interrupted;
    }

    /**
     * {@return whether the context was not cancelled and every pin, the deep ones too, is as the
     * host left it}: the pool's validator, on the thread that revives the context from idle
     */
    boolean isUsable() {
        return fit && !cancelled && firstDamage.execute(true).isNull();
    }

    /** The pool's enter hook: binds the context to the thread that took its section. */
    void enter() {
        context.enter();
    }

    /**
     * The pool's leave hook: unbinds it, on the same thread, before the section is released. After
     * an interrupt it also clears the thread's interrupt status: {@code Context.interrupt} interrupts
     * the Java threads in the context too, and a round that came after the script had stopped would
     * otherwise leave the flag set for the caller's next request (GraalJS reports it there as "Thread
     * was interrupted"). The pool runs this hook only once the interrupter has returned, so no round
     * comes later.
     */
    void leave() {
        context.leave();
        if (interrupted) {
            Thread.interrupted();
        }
    }

    /**
     * The pool's interrupter, on a thread of the pool while a script still runs: interrupts the script,
     * and cancels the context ({@code close(true)}) if the interrupt has not stopped it within the
     * grace.
     *
     * <p>{@link Context#interrupt(Duration)} waits until every thread has left the context, and the
     * thread running the script stays entered (the enter hook) until the pool has seen the
     * interrupter return. So this interrupts in short rounds and stops as soon as the run says the
     * script is over; the cancel runs on a thread of its own, for the same reason, and
     * {@link #close()} waits for it.
     *
     * @return {@link Interrupter.Outcome#RETIRE}: a stopped script may have left its state halfway
     */
    Interrupter.Outcome interrupt() {
        interrupted = true; // retired: a request that waited for the section goes round for a fresh one
        long giveUp = System.nanoTime() + interruptGraceNanos;
        while (inGuest) {
            try {
                context.interrupt(Duration.ofMillis(INTERRUPT_ROUND_MILLIS));
                break;
            } catch (TimeoutException stillEntered) {
                if (inGuest && System.nanoTime() - giveUp > 0) {
                    cancelled = true;
                    canceller = new Thread(() -> context.close(true), "graaljs-cancel-" + tenant);
                    canceller.setDaemon(true);
                    canceller.start();
                    break;
                }
            }
        }
        return Interrupter.Outcome.RETIRE;
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
        if (cancelled) {
            // closed by the canceller, which ends once the interrupted thread has left the context
            try {
                canceller.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            context.close();
        }
    }

    public String tenant() {
        return tenant;
    }

    /** {@return how often it was closed}: 1 once the pool disposed of it, 0 before */
    public int closes() {
        return closes.get();
    }

    /** {@return whether an interrupt did not stop a script within the grace, so the context was cancelled} */
    boolean wasCancelled() {
        return cancelled;
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
}
