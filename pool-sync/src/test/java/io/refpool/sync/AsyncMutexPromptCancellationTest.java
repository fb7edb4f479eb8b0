package io.refpool.sync;

/** Prompt cancellation of {@link AsyncMutex}: see {@link PromptCancellationContract}. */
public class AsyncMutexPromptCancellationTest extends PromptCancellationContract {
    public AsyncMutexPromptCancellationTest() {
        super(AcquireRoles.of(new AsyncMutex()), MutexSpec.class, 30);
    }
}
