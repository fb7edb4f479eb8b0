package io.refpool.sync;

/** {@link AsyncSemaphore} is linearizable to {@link SemaphoreSpec}: see {@link FifoLinearizabilityContract}. */
public class AsyncSemaphoreLinearizabilityTest extends FifoLinearizabilityContract {
    public AsyncSemaphoreLinearizabilityTest() {
        super(AcquireRoles.of(new AsyncSemaphore(SemaphoreSpec.MAX_PERMITS)), SemaphoreSpec.class);
    }
}
