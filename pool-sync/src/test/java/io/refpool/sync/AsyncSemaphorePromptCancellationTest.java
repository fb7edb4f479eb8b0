package io.refpool.sync;

/** Prompt cancellation of {@link AsyncSemaphore}, requests of one or two: see {@link PromptCancellationContract}. */
public class AsyncSemaphorePromptCancellationTest extends PromptCancellationContract {
    public AsyncSemaphorePromptCancellationTest() {
        super(AcquireRoles.of(new AsyncSemaphore(SemaphoreSpec.MAX_PERMITS)), SemaphoreSpec.class, 10);
    }
}
