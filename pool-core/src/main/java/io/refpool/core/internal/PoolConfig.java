package io.refpool.core.internal;

import com.github.benmanes.caffeine.cache.Caffeine;
import io.refpool.core.AttachMode;
import io.refpool.core.ErrorListener;
import io.refpool.core.LeakDetection;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Everything a pool is built from, validated by the public builder. The release queue is chosen
 * here so the benchmark module can measure older checks on the same attach path.
 */
public final class PoolConfig<K, V> {
    public Function<? super K, ? extends V> factory;
    public Consumer<? super V> disposer = value -> {};
    public AttachMode attachMode = AttachMode.EXCLUSIVE;
    public Executor executor = DrainerThreads.shared();
    public long drainDelayNanos = 100_000_000L;
    public int drainThreshold = 1024;
    public ErrorListener errorListener = PoolCore.LOGGING_LISTENER;
    public int maxObjects = Integer.MAX_VALUE;
    public Consumer<? super Caffeine<Object, Object>> idle;
    public LeakDetection leakDetection = LeakDetection.OFF;
    public int leakSampleInterval = 128;
    public Supplier<? extends ReleaseQueue> releaseQueue = DirtyFlagReleaseQueue::new;

    public PoolConfig(Function<? super K, ? extends V> factory) {
        this.factory = factory;
    }
}
