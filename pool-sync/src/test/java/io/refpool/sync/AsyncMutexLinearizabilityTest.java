package io.refpool.sync;

/** {@link AsyncMutex} is linearizable to {@link MutexSpec}: see {@link FifoLinearizabilityContract}. */
public class AsyncMutexLinearizabilityTest extends FifoLinearizabilityContract {
    public AsyncMutexLinearizabilityTest() {
        super(AcquireRoles.of(new AsyncMutex()), MutexSpec.class);
    }
}
