package io.zkcoord.lock;

import io.zkcoord.ZkClient;

/**
 * The {@link ZkLock} contract for the write side of {@link ZkReadWriteLock}: blockers and
 * contenders are write locks of other {@code ZkReadWriteLock} objects on the same path.
 */
class WriteLockContractTest extends LockContractTest {

    @Override
    protected ZkLock newLock(ZkClient client, String path) {
        return new ZkReadWriteLock(client, path).writeLock();
    }

    @Override
    protected String lockName() {
        return "write";
    }

    @Override
    protected ZkLock newBlocker(ZkClient client, String path) {
        return new ZkReadWriteLock(client, path).writeLock();
    }

    @Override
    protected LockPair newPairOnOneObject(ZkClient client, String path) {
        ZkLock write = new ZkReadWriteLock(client, path).writeLock();
        return new LockPair(write, write);
    }
}
