package io.refpool.core.internal;

import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.refpool.core.AttachMode;
import io.refpool.core.Disposer;
import io.refpool.core.ErrorListener;
import io.refpool.core.Interrupter;
import io.refpool.core.LeakDetection;
import io.refpool.core.ObjectFactory;
import io.refpool.core.ObjectValidator;
import io.refpool.core.SectionHooks;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * What a pool is built from, as the public builder validated it; immutable.
 *
 * @param factory creates a key's object
 * @param disposer disposes an object
 * @param attachMode the gate's mode
 * @param executor where drainers run ({@code null}: the library's drainer threads)
 * @param callExecutor where {@code callAsync} functions run ({@code null}: the library's call threads)
 * @param drainDelayNanos how long releases may stay pending with nobody attaching
 * @param drainThreshold how many pending releases make a drainer run at once
 * @param errorListener where failures are reported ({@code null}: a {@code System.Logger})
 * @param maxObjects the bound on live plus idle objects ({@code Integer.MAX_VALUE}: none)
 * @param idle configures the idle cache, or {@code null} for none
 * @param leakDetection the leak detection mode
 * @param leakSampleInterval one handle in how many is tracked under {@code SAMPLED}
 * @param strictAccess whether {@code Handle.get()} checks that its thread may use the object
 * @param name the pool's name, in messages, JFR events and drainer thread names, or {@code null}:
 *     one is made when the pool is built
 * @param defaultWait the limit of a blocking wait given none (gate, section), or {@code null}
 * @param interrupter stops a call running past its limit, or {@code null}
 * @param sectionHooks run when a thread takes and leaves a section, or {@code null}
 * @param recordTimings whether the pool times waits, uses and creations ({@link PoolTimings})
 * @param heldTooLong after how long an open handle or call is reported, or {@code null}: never
 * @param validator checks an idle object when an acquire revives it, or {@code null}
 * @param maxLifetimeNanos the maximum lifetime of an object, or 0 for none
 * @param ticker the pool's time source, or {@code null} for {@link Ticker#systemTicker()}
 * @param leaseSweepNanos how often unused thread leases are given back, or 0: no leases
 */
public record PoolSettings<K, V>(
        ObjectFactory<? super K, ? extends V> factory,
        Disposer<? super K, ? super V> disposer,
        AttachMode attachMode,
        Executor executor,
        Executor callExecutor,
        long drainDelayNanos,
        int drainThreshold,
        ErrorListener errorListener,
        int maxObjects,
        Consumer<? super Caffeine<Object, Object>> idle,
        LeakDetection leakDetection,
        int leakSampleInterval,
        boolean strictAccess,
        String name,
        Duration defaultWait,
        Interrupter<? super K, ? super V> interrupter,
        SectionHooks<? super K, ? super V> sectionHooks,
        boolean recordTimings,
        Duration heldTooLong,
        ObjectValidator<? super K, ? super V> validator,
        long maxLifetimeNanos,
        Ticker ticker,
        long leaseSweepNanos) {

    /** {@return the pool's time source: the configured ticker, or the system's} */
    Ticker clock() {
        return ticker == null ? Ticker.systemTicker() : ticker;
    }

    /** {@return the executor of drainers: the configured one, or the library's drainer threads} */
    Executor drainExecutor() {
        return executor == null ? DrainerThreads.shared() : executor;
    }

    /**
     * {@return where warm-ups run: the configured executor, or the library's call threads}, never the
     * drainer threads every pool shares, which a warm-up's factories would hold from other pools' drains
     */
    Executor warmUps() {
        return executor == null ? OwnThreads.calls() : executor;
    }

    /** {@return where {@code callAsync} functions run: the configured executor, or the library's call threads} */
    Executor callFunctions() {
        return callExecutor == null ? OwnThreads.calls() : callExecutor;
    }

    /** {@return the listener of failures: the configured one, or a {@code System.Logger}} */
    ErrorListener errors() {
        return errorListener == null ? PoolCore.LOGGING_LISTENER : errorListener;
    }
}
